/**
 * Who may call MCP tools: an API key as on /v1 (`x-api-key`, or `Authorization: Bearer
 * sk-…`); where the storefront is on, a storefront agent access token (`Authorization:
 * Bearer <token>`) paying from the agent's Credits, or a receipt (`Authorization: Receipt
 * rcpt_…`) paying from its credit, both on the seller of the request's host as on
 * `{storefront}/gateway/v1`. A request with no credential has no caller yet (`null`):
 * discovery answers it, and a tool call asks it to pay or to authenticate.
 *
 * A refused agent credential answers 401 with `WWW-Authenticate: Bearer
 * resource_metadata="…"` (RFC 9728), naming where the endpoint says how to get a token.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller, Principal } from '../../domain/identity/caller.js';
import type { Meter } from '../../domain/billing/meter.js';
import { API_KEY_PREFIX } from '../../domain/identity/api-keys.js';
import type { AgentTokenService } from '../../domain/storefront/agent-tokens.port.js';
import { presentedCredential } from '../../domain/storefront/credentials.js';
import { receiptHash } from '../../domain/storefront/receipts.js';
import { storefrontProjectId, type Seller } from '../../domain/storefront/sellers.js';
import { AppError, isAppError } from '../../domain/shared/errors.js';
import { headerOf, type AuthStrategy } from './strategy.js';

/** The storefront as MCP callers meet it. */
export interface StorefrontCallers {
  tokens: AgentTokenService;
  /** The seller of a host and its meter, or null when the host maps to none. */
  sellerAt(host: string): { seller: Seller; meter: Meter } | null;
  audienceOf(seller: Seller): string;
  /** The protected-resource metadata URL of the endpoint, as this request reached it. */
  resourceMetadataUrlOf(request: FastifyRequest): string;
}

const API_KEY_BEARER = new RegExp(`^Bearer\\s+${API_KEY_PREFIX}`, 'i');

export class McpCallerStrategy implements AuthStrategy {
  readonly needs = 'headers';

  constructor(
    private readonly apiKeys: AuthStrategy,
    private readonly storefront: StorefrontCallers | null,
  ) {}

  authenticate(request: FastifyRequest): Caller | null | Promise<Caller | null> {
    if (headerOf(request, 'x-api-key') !== undefined) return this.apiKeys.authenticate(request);
    const authorization = headerOf(request, 'authorization');
    if (authorization === undefined) return null;
    const at = this.storefront && !API_KEY_BEARER.test(authorization) ? this.storefront.sellerAt(request.host) : null;
    if (!at) return this.apiKeys.authenticate(request);
    try {
      const presented = presentedCredential(authorization, undefined);
      if (presented.kind === 'receipt') {
        const receiptId = receiptHash(presented.receiptId);
        return this.#caller(at, { kind: 'receipt', projectId: storefrontProjectId(at.seller.id), keyId: null, subject: `receipt:${receiptId}`, payer: { kind: 'receipt', receiptId } });
      }
      if (presented.kind !== 'bearer') return this.apiKeys.authenticate(request);
      const agent = this.storefront!.tokens.verify(presented.token, this.storefront!.audienceOf(at.seller));
      if (typeof agent === 'string') return this.#agent(at, agent);
      return agent.then((id) => this.#agent(at, id), (err: unknown) => Promise.reject(this.#challenged(request, err)));
    } catch (err) {
      throw this.#challenged(request, err);
    }
  }

  #agent(at: { seller: Seller; meter: Meter }, agentId: string): Caller {
    return this.#caller(at, { kind: 'storefront_agent', projectId: storefrontProjectId(at.seller.id), keyId: null, subject: `agent:${agentId}`, payer: { kind: 'agent', agentId } });
  }

  #caller(at: { meter: Meter }, principal: Principal): Caller {
    return { principal, meter: at.meter };
  }

  /** A refused credential with the RFC 9728 challenge that says where to look. */
  #challenged(request: FastifyRequest, err: unknown): unknown {
    if (!isAppError(err) || err.kind !== 'authentication') return err;
    const header = `Bearer resource_metadata="${this.storefront!.resourceMetadataUrlOf(request)}"`;
    return new AppError(err.kind, err.message, { code: err.code, challenge: { headers: { ...err.challenge?.headers, 'www-authenticate': header } } });
  }
}
