/**
 * The gateway's strategy: a payment intermediary signs each request it proxies
 * (`gw-signature`, src/domain/gateway/signature.ts), over the exact body bytes, so it
 * runs on the raw body before any JSON is parsed. The caller is the buying agent
 * (`gw-agent-id`), the payer the intermediary, the tenant the gateway project, and the
 * meter the intermediary's (allowance check, then the usage report). Every refusal is the
 * same 401; only the log line and a counter say why.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller, Principal } from '../../domain/identity/caller.js';
import type { GatewayVerifier, Verdict } from '../../domain/gateway/gateway-verifier.js';
import type { IntermediaryMeter } from '../../domain/gateway/intermediary-meter.js';
import { AppError } from '../../domain/shared/errors.js';
import { headerOf, type AuthStrategy } from './strategy.js';

export const INVALID_GATEWAY_SIGNATURE = { error: 'invalid_gateway_signature' } as const;

const invalidSignature = () =>
  new AppError('authentication', 'invalid gateway signature', {
    code: 'invalid_gateway_signature',
    challenge: { body: INVALID_GATEWAY_SIGNATURE },
  });

const EMPTY = Buffer.alloc(0);

export interface GatewayStrategyOptions {
  verifier: GatewayVerifier;
  meter: IntermediaryMeter;
  /** The gateway project: the tenant whose usage lists the gateway's calls. */
  tenantProjectId: string;
  intermediaryId: string;
  onRejected(reason: string): void;
}

export class GatewayStrategy implements AuthStrategy {
  readonly needs = 'raw-body';
  /** The same payer on every gateway call. */
  readonly #payer: Principal['payer'];

  constructor(private readonly options: GatewayStrategyOptions) {
    this.#payer = { kind: 'intermediary', intermediaryId: options.intermediaryId };
  }

  authenticate(request: FastifyRequest): Caller | Promise<Caller> {
    const requestId = headerOf(request, 'gw-request-id');
    const agentId = headerOf(request, 'gw-agent-id');
    const verdict = this.options.verifier.verify(headerOf(request, 'gw-signature'), {
      method: request.method,
      pathWithQuery: request.raw.url ?? request.url,
      body: request.rawBody ?? EMPTY,
      requestId,
      agentId,
    });
    // Synchronous with the in-memory replay store; a shared (Redis) store answers later.
    if (verdict instanceof Promise) return verdict.then((settled) => this.#callerOf(request, settled, requestId, agentId));
    return this.#callerOf(request, verdict, requestId, agentId);
  }

  #callerOf(request: FastifyRequest, verdict: Verdict, requestId: string | undefined, agentId: string | undefined): Caller {
    if (!verdict.ok) {
      this.options.onRejected(verdict.reason);
      request.log.warn({ reason: verdict.reason, gw_request_id: requestId, gw_agent_id: agentId }, 'gateway signature rejected');
      throw invalidSignature();
    }
    const principal: Principal = {
      kind: 'gateway_agent',
      projectId: this.options.tenantProjectId,
      keyId: null,
      subject: agentId ?? null,
      payer: this.#payer,
    };
    return { principal, meter: this.options.meter.forRequest({ requestId, agentId, route: request.routeOptions.url ?? request.url }) };
  }
}
