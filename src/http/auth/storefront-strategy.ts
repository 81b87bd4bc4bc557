/**
 * The storefront's strategy (headers only): an agent access token (`Authorization:
 * Bearer`, or `GW-Agent-Authorization: Bearer` beside an MPP `Authorization: Payment`
 * credential) or a receipt (`Authorization: Receipt`). Callers pay through the seller's
 * StorefrontMeter.
 *
 * The spec checks `model` (on chat) and the body (on a purchase) before the credential,
 * so a credential that is missing or fails is not refused here: the caller is admitted
 * with a meter that refuses with that error when the call is admitted, after the request
 * was validated; a handler that reads the credential raises it (`refusalOf`). Nothing
 * billable runs before that refusal. With `credential: 'optional'` (the catalog,
 * purchases, entitlements), a request that presents nothing is a visitor, not refused.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller, Principal } from '../../domain/identity/caller.js';
import type { Meter } from '../../domain/billing/meter.js';
import type { AgentTokenService } from '../../domain/storefront/agent-tokens.port.js';
import { AGENT_AUTHORIZATION, bearerRequired, presentedCredential } from '../../domain/storefront/credentials.js';
import { receiptHash } from '../../domain/storefront/receipts.js';
import { storefrontProjectId, type Seller } from '../../domain/storefront/sellers.js';
import { AppError } from '../../domain/shared/errors.js';
import { headerOf, type AuthStrategy } from './strategy.js';

/** A meter that admits nothing: the credential's refusal, raised at admission. */
class RefusingMeter implements Meter {
  constructor(readonly refusal: unknown) {}

  admit(): never {
    throw this.refusal;
  }
}

/** Why the strategy would not admit this caller's credential, or undefined when it did (or none was needed). */
export const refusalOf = (caller: Caller): unknown => (caller.meter instanceof RefusingMeter ? caller.meter.refusal : undefined);

/** The caller kind of a storefront request that presents no credential where none is needed. */
export const STOREFRONT_VISITOR = 'storefront_visitor';

export interface StorefrontStrategyDeps {
  tokens: AgentTokenService;
  /** The seller's meter (one per seller). */
  meterOf(seller: Seller): Meter;
  audienceOf(seller: Seller): string;
  tokenPath: string;
  /** `optional`: a request that presents no agent token nor receipt is admitted as a visitor (who cannot be metered). */
  credential: 'required' | 'optional';
}

export class StorefrontStrategy implements AuthStrategy {
  readonly needs = 'headers';

  constructor(private readonly deps: StorefrontStrategyDeps) {}

  authenticate(request: FastifyRequest): Caller | Promise<Caller> {
    const seller = request.seller;
    if (!seller) throw new AppError('internal', 'storefront strategy without a seller');
    try {
      const presented = presentedCredential(headerOf(request, 'authorization'), headerOf(request, AGENT_AUTHORIZATION));
      if (presented.kind === 'receipt') {
        const receiptId = receiptHash(presented.receiptId);
        return this.#caller(seller, { kind: 'receipt', projectId: projectOf(seller), keyId: null, subject: `receipt:${receiptId}`, payer: { kind: 'receipt', receiptId } });
      }
      const token = presented.kind === 'bearer' ? presented.token : presented.kind === 'payment' ? presented.bearer : null;
      // No agent token (nothing, or a payment credential alone): a visitor where that is enough.
      if (token === null && this.deps.credential === 'optional') return this.#visitor(request, seller);
      if (token === null) return this.#refused(request, seller, bearerRequired('Send your agent access token as "Authorization: Bearer <token>"', this.deps.tokenPath));
      const agent = this.deps.tokens.verify(token, this.deps.audienceOf(seller));
      if (typeof agent === 'string') return this.#agent(seller, agent);
      return agent.then((id) => this.#agent(seller, id), (err: unknown) => this.#refused(request, seller, err));
    } catch (err) {
      return this.#refused(request, seller, err);
    }
  }

  #agent(seller: Seller, agentId: string): Caller {
    return this.#caller(seller, { kind: 'storefront_agent', projectId: projectOf(seller), keyId: null, subject: `agent:${agentId}`, payer: { kind: 'agent', agentId } });
  }

  #caller(seller: Seller, principal: Principal): Caller {
    return { principal, meter: this.deps.meterOf(seller) };
  }

  /** Admitted with a refusing meter; rate-limited by address, as it names no agent. */
  #refused(request: FastifyRequest, seller: Seller, error: unknown): Caller {
    return {
      principal: { kind: 'storefront_agent', projectId: projectOf(seller), keyId: null, subject: `anonymous:${request.ip}`, payer: { kind: 'agent', agentId: '' } },
      meter: new RefusingMeter(error),
    };
  }

  #visitor(request: FastifyRequest, seller: Seller): Caller {
    return {
      principal: { kind: STOREFRONT_VISITOR, projectId: projectOf(seller), keyId: null, subject: `anonymous:${request.ip}`, payer: { kind: 'agent', agentId: '' } },
      meter: new RefusingMeter(bearerRequired('Send your agent access token as "Authorization: Bearer <token>"', this.deps.tokenPath)),
    };
  }
}

/** Storefront callers' tenant: the seller's project. */
const projectOf = (seller: Seller) => storefrontProjectId(seller.id);
