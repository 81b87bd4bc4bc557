/**
 * The agent storefront: its repository, rails, tokens, services and meters, its payers'
 * debits, its scope (when a plan is configured) and the admin routes over its purchases
 * and accounts (readable whether or not the storefront is configured now).
 */
import type { Logger } from 'pino';
import type { StorefrontConfig } from '../config/storefront-config.js';
import type { Config } from '../config/schema.js';
import type { ModelPrices } from '../http/routes/storefront/catalog.js';
import type { Database } from '../storage/db/database.js';
import type { Clock } from '../domain/shared/clock.js';
import { StorefrontRepository } from '../storage/db/repositories/storefront.repository.js';
import { SellerDirectory, storefrontProjectId, type Seller } from '../domain/storefront/sellers.js';
import { StorefrontAccounts } from '../domain/storefront/accounts.js';
import { StorefrontMeter, type StorefrontMeterDeps } from '../domain/storefront/storefront-meter.js';
import type { TokenPrice } from '../domain/shared/money.js';
import type { PayerKind } from '../domain/identity/caller.js';
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
import { createRateLimiter } from '../storage/rate-limit/rate-limiter.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import { FakeCardRail } from '../adapters/payments/card/fake-card-rail.js';
import { StorefrontActivityRepository } from '../storage/db/repositories/storefront-activity.repository.js';
import { bindRoutes, type BoundRoutes } from '../http/route-module.js';
import { storefrontScope } from '../http/scopes/storefront.js';
import { registerCatalogRoutes } from '../http/routes/storefront/catalog.js';
import { registerPurchaseRoutes } from '../http/routes/storefront/purchases.js';
import { registerTokenRoute } from '../http/routes/storefront/tokens.js';
import { registerCheckoutRoutes } from '../http/routes/storefront/checkout.js';
import { registerStorefrontAdmin } from '../http/routes/admin/storefront.js';
import type { CoreBilling, CoreInference, CoreInfrastructure } from './core.js';
import type { Feature } from './feature.js';
import { StripeCardRail } from '../adapters/payments/card/stripe-card-rail.js';

export interface Storefront {
  config: StorefrontConfig;
  /** The ledger itself: for the composition and tests; the routes read accounts through `accounts`. */
  store: StorefrontRepository;
  accounts: StorefrontAccounts;
  sellers: SellerDirectory;
  /** The meter of a seller's chat calls (one per seller). */
  meterOf(seller: Seller): StorefrontMeter;
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

export interface StorefrontDeps {
  database: Database;
  clock: Clock;
  logger: Logger;
  reservations: ReservationBook;
  redisUrl: string | null;
  redisPrefix: string;
  priceOf: (model: string) => TokenPrice;
  /** Writes a call's usage record with its ledger draw. */
  usage: StorefrontMeterDeps['usage'];
  /** How a call's hold is fitted to the credit and how long it waits (the `billing` settings, as on /v1). */
  holdPolicy: StorefrontMeterDeps['policy'];
}

/**
 * The crypto rails' libraries are loaded only when their rail is configured: mppx's server
 * brings viem (well over a thousand modules), which every start of the server or the CLI
 * would otherwise load.
 */
async function cryptoRails(config: StorefrontConfig): Promise<PaymentRail[]> {
  const rails: PaymentRail[] = [];
  if (config.x402) rails.push(new (await import('../adapters/payments/x402-rail.js')).X402Rail(config.x402));
  if (config.mpp) rails.push(new (await import('../adapters/payments/mpp-rail.js')).MppRail(config.mpp));
  return rails;
}

export async function createStorefront(config: StorefrontConfig | null, deps: StorefrontDeps): Promise<Storefront | null> {
  if (!config) return null;
  const store = new StorefrontRepository(deps.database);
  const fakeCard = config.card?.provider === 'fake' ? new FakeCardRail(deps.clock) : null;
  const card: CardRail | null = fakeCard ?? (config.card?.provider === 'stripe' ? new StripeCardRail(config.card.secretKey, config.card.webhookSecret) : null);
  const rails = await cryptoRails(config);
  if (card) rails.push(new CardPaymentRail(card, store, deps.clock));
  if (rails.length === 0) deps.logger.warn('storefront: no payment rail is configured; purchases answer payment_provider_unavailable');
  const meterDeps: StorefrontMeterDeps = { store, reservations: deps.reservations, priceOf: deps.priceOf, clock: deps.clock, usage: deps.usage, basePath: config.prefix, policy: deps.holdPolicy };
  const meters = new Map<string, StorefrontMeter>();
  return {
    config,
    store,
    accounts: new StorefrontAccounts(store),
    sellers: new SellerDirectory(config),
    meterOf(seller) {
      let meter = meters.get(seller.id);
      if (!meter) meters.set(seller.id, (meter = new StorefrontMeter(seller, meterDeps)));
      return meter;
    },
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

/** Chat models with an upstream or in-process backend, and their prices per million tokens (the manifest's `prices`). */
export function modelPrices(config: Readonly<Config>): ModelPrices {
  const prices: Record<string, { inputPer1M: string; outputPer1M: string }> = {};
  for (const model of Object.values(config.models)) {
    if (model.entry.task !== 'chat') continue;
    prices[model.id] = { inputPer1M: String(model.price.inputPerMillionUsd), outputPer1M: String(model.price.outputPerMillionUsd) };
  }
  return prices;
}

export async function createStorefrontFeature(core: CoreInfrastructure & CoreBilling & CoreInference): Promise<Feature<Storefront | null>> {
  const { config, database } = core;
  const storefront = await createStorefront(config.storefront, {
    database,
    clock: core.clock,
    logger: core.logger,
    reservations: core.reservations,
    redisUrl: config.redisUrl,
    redisPrefix: config.rateLimit.redisPrefix,
    priceOf: core.priceOf,
    usage: core.billing,
    holdPolicy: config.billing,
  });
  await ensureStorefrontProjects(storefront, core.projects);
  return {
    services: storefront,
    routes: { admin: [bindRoutes(registerStorefrontAdmin, { activity: new StorefrontActivityRepository(database) })] },
    scopes: () => (storefront ? [storefrontScopeOf(storefront, modelPrices(config), [core.routes.chatCompletions, core.routes.messages])] : []),
    payerDebits: storefrontDebits(config.storefront, database),
    close: async () => storefront?.limiter.close(),
  };
}

/** The storefront's routes, and the chat routes of /v1 (chat completions, Anthropic's messages), under the storefront's scope. */
function storefrontScopeOf(storefront: Storefront, prices: ModelPrices, chat: readonly BoundRoutes[]) {
  const { prefix, anonymousLimitMicros, requestsPerMinute } = storefront.config;
  const { sellers, tokens, purchases, accounts, limiter } = storefront;
  return storefrontScope(
    { prefix, sellers, tokens, meterOf: storefront.meterOf, limiter, requestsPerMinute },
    {
      storefront: [
        bindRoutes(registerCatalogRoutes, { prefix, anonymousLimitMicros, prices, purchases, accounts }),
        bindRoutes(registerPurchaseRoutes, { prefix, purchases, accounts }),
        bindRoutes(registerTokenRoute, { prefix, tokens }),
        bindRoutes(registerCheckoutRoutes, { card: storefront.card, fakeCard: storefront.fakeCard, accounts }),
      ],
      chat,
    },
  );
}
