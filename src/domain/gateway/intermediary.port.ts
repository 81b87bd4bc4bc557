/**
 * The payment intermediary as Sluice sees it: an allowance check before billable work,
 * and usage reports after. A port, so a real intermediary's seller SDK can replace the
 * HTTP adapter (src/adapters/intermediary/intermediary-http.ts), whose wire contract
 * docs/gateway.md shows.
 */

export interface MeterQuantity {
  meter: 'input_tokens' | 'output_tokens';
  quantity: number;
}

export interface AllowanceRequest {
  requestId: string;
  agentId: string;
  /** The model id as a kebab slug (serviceSlugOf). */
  service: string;
  /** Estimates: the input tokens, and the output cap for models that produce output. */
  usage: MeterQuantity[];
}

export type AllowanceOutcome =
  | { kind: 'allowed' }
  | { kind: 'denied'; reason: string }
  /** A transient outage (timeout, connection error, 5xx, 429, an answer that is not the contract's): fail open. */
  | { kind: 'unavailable'; cause: string }
  /** Any other answer (a bad read key, 400): Sluice itself is misconfigured, fail closed. */
  | { kind: 'misconfigured'; status: number };

/** One settled meter of one call; the intermediary deduplicates on `idempotencyKey`. */
export interface UsageEvent {
  requestId: string;
  agentId: string;
  service: string;
  meter: MeterQuantity['meter'];
  quantity: number;
  /** ISO 8601. */
  timestamp: string;
  idempotencyKey: string;
}

export type ReportOutcome =
  | { kind: 'delivered'; accepted: number; duplicates: number }
  /** Worth another attempt (timeout, connection error, 5xx, 429, 401/403: Sluice's key refused); `retryAfterMs` from `Retry-After`. */
  | { kind: 'retry'; cause: string; retryAfterMs: number | null }
  /** Will never be accepted as sent (any other 4xx): a dead letter at once. */
  | { kind: 'rejected'; cause: string };

export interface IntermediaryClient {
  checkAllowance(request: AllowanceRequest): Promise<AllowanceOutcome>;
  reportUsage(events: readonly UsageEvent[]): Promise<ReportOutcome>;
  close?(): Promise<void>;
}

/** The intermediary's service slug of a model: lower case, each run of other characters → `-`. */
export function serviceSlugOf(model: string): string {
  return model
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');
}
