/**
 * The meter of gateway calls, paid by the intermediary. Admission is the allowance check
 * (a deny is a 402 carrying the intermediary's `payment_required` body; an outage fails
 * open, counted and logged; a refusal of Sluice's own credentials fails closed with 503).
 * Settlement writes the usage record and the usage report for the intermediary in one
 * transaction (the outbox; a worker delivers it), and answers `gw-usage` for the reply.
 * No project's credit is held or debited.
 */
import type { Principal } from '../identity/caller.js';
import type { Admission, Meter, MeteredCall, SettledUsage, Settlement } from '../billing/meter.js';
import type { UsageRecord } from '../billing/usage.types.js';
import { isoTimestampOf, type Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import type { AllowanceOutcome, IntermediaryClient, MeterQuantity } from './intermediary.port.js';
import type { CallUsage } from './usage-report.js';
import { serviceSlugOf } from './intermediary.port.js';

/** Writes a usage record with the report that bills it, in one transaction. */
export interface SettlementWriter {
  write(record: UsageRecord, call: CallUsage): Promise<void>;
}

/** What the gateway's signature bound to this request. */
export interface GatewayRequest {
  /** `gw-request-id`, when sent. */
  requestId: string | undefined;
  /** `gw-agent-id`, when sent. */
  agentId: string | undefined;
  /** The route as mounted (`/gateway/v1/chat/completions`), recorded on the usage. */
  route: string;
}

export interface IntermediaryMeterDeps {
  client: IntermediaryClient;
  settlements: SettlementWriter;
  /** Builds the usage record of a settled call (BillingService.usageRecord). */
  usageRecord(principal: Principal, call: MeteredCall, usage: SettledUsage): UsageRecord;
  /** Models that produce output tokens (everything but embeddings) report an `output_tokens` meter. */
  producesOutput(model: string): boolean;
  clock: Clock;
  /** How long an agent's `allowed` answer is reused per service; 0 asks every time. */
  allowanceCacheMs: number;
  /** Counts each admission's allowance outcome; the ids (for the log line) come with the intermediary's answers, not with cached ones. */
  onAllowance(outcome: AllowanceOutcome['kind'] | 'cached', detail?: { agentId: string; requestId: string; cause?: string; status?: number }): void;
}

const MAX_CACHED_AGENTS = 10_000;
const MAX_CACHED_MODELS = 1_000;

/** What the meter derives from a model id, once per model rather than per call. */
interface ModelMeters {
  service: string;
  producesOutput: boolean;
}

/** `gw-usage: input_tokens=<n>, output_tokens=<n>` (no output meter for embeddings). */
export function gwUsageHeader(usage: CallUsage['usage']): string {
  const input = `input_tokens=${usage.input_tokens ?? 0}`;
  return usage.output_tokens === undefined ? input : `${input}, output_tokens=${usage.output_tokens}`;
}

const paymentRequired = (service: string, reason: string, usage: readonly MeterQuantity[]) =>
  new AppError('payment_required', `The intermediary refused the allowance: ${reason}`, {
    code: 'payment_required',
    challenge: {
      body: { error: 'payment_required', serviceSlug: service, reason, usage: usage.map((q) => ({ meterSlug: q.meter, quantity: q.quantity })) },
    },
  });

const allowanceUnavailable = () =>
  new AppError('unavailable', 'The intermediary refused Sluice’s allowance credentials', {
    code: 'allowance_unavailable',
    challenge: { body: { error: 'allowance_unavailable' } },
  });

export class IntermediaryMeter {
  /** Service → agent → until when an `allowed` answer stands. */
  readonly #allowed = new Map<string, Map<string, number>>();
  /** By model id (calls are admitted for served models only; capped all the same). */
  readonly #meters = new Map<string, ModelMeters>();

  constructor(private readonly deps: IntermediaryMeterDeps) {}

  /** The meter of one gateway request (the ids its signature bound). */
  forRequest(request: GatewayRequest): Meter {
    return new RequestMeter(this, request);
  }

  /**
   * Synchronous when the agent's allowance is cached (every call but one per window under
   * load): no promise, no estimate built; otherwise after the intermediary's answer.
   */
  admitFor(principal: Principal, call: MeteredCall, request: GatewayRequest): Admission | Promise<Admission> {
    const meters = this.#metersOf(call.model);
    const agentId = request.agentId ?? '';
    if (this.#allowedNow(meters.service, agentId)) {
      this.deps.onAllowance('cached');
      return new IntermediaryAdmission(this.deps, principal, call, request, meters);
    }
    const estimate: MeterQuantity[] = [{ meter: 'input_tokens', quantity: call.inputTokens }];
    if (meters.producesOutput) estimate.push({ meter: 'output_tokens', quantity: call.maxOutputTokens });
    return this.#checkAllowance(meters.service, agentId, request.requestId ?? '', estimate).then(
      () => new IntermediaryAdmission(this.deps, principal, call, request, meters),
    );
  }

  #allowedNow(service: string, agentId: string): boolean {
    return this.deps.allowanceCacheMs > 0 && (this.#allowed.get(service)?.get(agentId) ?? 0) > this.deps.clock.nowMs();
  }

  #metersOf(model: string): ModelMeters {
    let meters = this.#meters.get(model);
    if (!meters) {
      meters = { service: serviceSlugOf(model), producesOutput: this.deps.producesOutput(model) };
      if (this.#meters.size < MAX_CACHED_MODELS) this.#meters.set(model, meters);
    }
    return meters;
  }

  async #checkAllowance(service: string, agentId: string, requestId: string, usage: MeterQuantity[]): Promise<void> {
    const outcome = await this.deps.client.checkAllowance({ requestId, agentId, service, usage });
    this.deps.onAllowance(outcome.kind, {
      agentId,
      requestId,
      ...(outcome.kind === 'unavailable' ? { cause: outcome.cause } : {}),
      ...(outcome.kind === 'misconfigured' ? { status: outcome.status } : {}),
    });
    if (outcome.kind === 'denied') throw paymentRequired(service, outcome.reason, usage);
    if (outcome.kind === 'misconfigured') throw allowanceUnavailable();
    if (outcome.kind === 'allowed' && this.deps.allowanceCacheMs > 0) this.#cacheAllowed(service, agentId);
  }

  #cacheAllowed(service: string, agentId: string): void {
    let agents = this.#allowed.get(service);
    if (!agents) {
      if (this.#allowed.size >= MAX_CACHED_MODELS) this.#allowed.clear();
      this.#allowed.set(service, (agents = new Map()));
    }
    if (agents.size >= MAX_CACHED_AGENTS) agents.clear();
    agents.set(agentId, this.deps.clock.nowMs() + this.deps.allowanceCacheMs);
  }
}

/** One request's meter (a class rather than a closure: one is made per gateway request). */
class RequestMeter implements Meter {
  constructor(
    private readonly meter: IntermediaryMeter,
    private readonly request: GatewayRequest,
  ) {}

  admit(principal: Principal, call: MeteredCall): Admission | Promise<Admission> {
    return this.meter.admitFor(principal, call, this.request);
  }
}

class IntermediaryAdmission implements Admission {
  #done = false;

  constructor(
    private readonly deps: IntermediaryMeterDeps,
    private readonly principal: Principal,
    private readonly call: MeteredCall,
    private readonly request: GatewayRequest,
    private readonly meters: ModelMeters,
  ) {}

  settle(usage: SettledUsage): Promise<Settlement> {
    if (this.#done) return Promise.reject(new AppError('internal', 'a metered call was settled twice'));
    this.#done = true;
    // Assigned, not spread: on Node 20 a literal that spreads and then adds a property takes V8's slow path.
    const record = this.deps.usageRecord(this.principal, this.call, usage);
    record.route = this.request.route;
    const call: CallUsage = {
      // The intermediary deduplicates on this key: its own request id, else Sluice's.
      key: this.request.requestId ?? this.call.requestId,
      requestId: this.request.requestId ?? '',
      agentId: this.request.agentId ?? '',
      service: this.meters.service,
      timestamp: isoTimestampOf(record.createdAtMs),
      usage: this.meters.producesOutput ? { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens } : { input_tokens: usage.inputTokens },
    };
    const settlement: Settlement = { record, headers: { 'gw-usage': gwUsageHeader(call.usage) } };
    return this.deps.settlements.write(record, call).then(() => settlement);
  }

  release(): void {
    this.#done = true;
  }
}
