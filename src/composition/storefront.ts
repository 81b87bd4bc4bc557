/** The storefront's part of the composition root: its repository, rails, tokens and services. */
import type { Logger } from 'pino';
import type { StorefrontConfig } from '../config/storefront-config.js';
import type { Database } from '../storage/db/database.js';
import type { Clock } from '../domain/shared/clock.js';
import { StorefrontRepository } from '../storage/db/repositories/storefront.repository.js';
import { SellerDirectory, storefrontProjectId } from '../domain/storefront/sellers.js';
import type { PayerKind } from '../domain/identity/payer.types.js';
import type { PayerDebit } from '../storage/db/repositories/usage.repository.js';
import type { ProjectsService } from '../domain/projects/projects.service.js';
import { StorefrontLedgerDebit } from '../storage/db/repositories/storefront-debit.repository.js';
import { AgentTokens } from '../adapters/jose/agent-tokens.js';
import type { AgentTokenService } from '../domain/storefront/agent-tokens.port.js';
import { PurchaseService } from '../domain/storefront/purchases.js';
import type { PaymentRail } from '../domain/storefront/payment-rail.port.js';
import type { CardRail } from '../domain/storefront/card-rail.port.js';
import type { ReservationBook } from '../domain/billing/reservations.js';
import { CardPaymentRail } from '../domain/storefront/card-payment-rail.js';
import { X402Rail } from '../adapters/payments/x402-rail.js';
import { MppRail } from '../adapters/payments/mpp-rail.js';
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import { FakeCardRail } from '../adapters/payments/card/fake-card-rail.js';
import { StripeCardRail } from '../adapters/payments/card/stripe-card-rail.js';

export interface Storefront {
  config: StorefrontConfig;
  store: StorefrontRepository;
  sellers: SellerDirectory;
  tokens: AgentTokenService;
  purchases: PurchaseService;
  /** The card provider, when card payments are configured. */
  card: CardRail | null;
  /** Credit held by storefront calls in flight (the same book as /v1's, keyed by seller and holder). */
  reservations: ReservationBook;
  /** Storefront chat calls per agent or receipt per minute (its own counters, shared through Redis when configured). */
  limiter: RateLimiter;
  /** The built-in fake provider (serves the local checkout page), when it is the card provider. */
  fakeCard: FakeCardRail | null;
}

export function createStorefront(
  config: StorefrontConfig | null,
  deps: { database: Database; clock: Clock; logger: Logger; reservations: ReservationBook; redisUrl: string | null; redisPrefix: string },
): Storefront | null {
  if (!config) return null;
  const store = new StorefrontRepository(deps.database);
  const fakeCard = config.card?.provider === 'fake' ? new FakeCardRail(deps.clock) : null;
  const card: CardRail | null = fakeCard ?? (config.card?.provider === 'stripe' ? new StripeCardRail(config.card.secretKey, config.card.webhookSecret) : null);
  const rails: PaymentRail[] = [];
  if (config.x402) rails.push(new X402Rail(config.x402));
  if (config.mpp) rails.push(new MppRail(config.mpp));
  if (card) rails.push(new CardPaymentRail(card, store, deps.clock));
  if (rails.length === 0) deps.logger.warn('storefront: no payment rail is configured; purchases answer payment_provider_unavailable');
  return {
    config,
    store,
    sellers: new SellerDirectory(config),
    tokens: new AgentTokens({ agentKeys: config.agentKeys, secret: config.tokenSecret, ttlSeconds: config.tokenTtlSeconds, clock: deps.clock }),
    purchases: new PurchaseService(store, rails, deps.clock, config.anonymousLimitMicros),
    card,
    reservations: deps.reservations,
    limiter: createRateLimiter({ requestsPerMinute: config.requestsPerMinute, redisUrl: deps.redisUrl, keyPrefix: `${deps.redisPrefix}:storefront` }),
    fakeCard,
  };
}

/**
 * The debits of storefront payers (agents' and receipts' ledger draws), for the usage
 * repository: a storefront call's record and its draw are written in one transaction.
 */
export function storefrontDebits(config: StorefrontConfig | null, database: Database): Map<PayerKind, PayerDebit> {
  if (!config) return new Map();
  const sellerOfProject = new Map(new SellerDirectory(config).sellers.map((s) => [storefrontProjectId(s.id), s.id]));
  const debit = new StorefrontLedgerDebit(database, sellerOfProject);
  return new Map<PayerKind, PayerDebit>([['agent', debit], ['receipt', debit]]);
}

/** One tenant project per seller (no credit of its own), created once: its usage records are the storefront calls'. */
export async function ensureStorefrontProjects(storefront: Storefront | null, projects: ProjectsService): Promise<void> {
  for (const seller of storefront?.sellers.sellers ?? []) {
    await projects.ensureProject(storefrontProjectId(seller.id), `Storefront ${seller.name}`.slice(0, 128));
  }
}
