/**
 * The durable outbox: messages to other systems written in the same transaction as the
 * state they report (a usage report beside its usage record), so a crash between the
 * answer and the delivery loses nothing. A worker (outbox-worker.ts) delivers them by
 * target kind, retries with backoff, and parks what cannot be delivered as dead letters,
 * which an operator can list and replay.
 */

export type OutboxState = 'pending' | 'sent' | 'dead';

export interface OutboxMessage {
  id: string;
  /** Which handler delivers it (e.g. `gateway_usage`). */
  target: string;
  /** The receiver deduplicates on it; unique per target. */
  idempotencyKey: string;
  payload: unknown;
  state: OutboxState;
  attempts: number;
  nextAttemptAtMs: number;
  lastError: string | null;
  createdAtMs: number;
  sentAtMs: number | null;
}

/** A message to enqueue; the store fills in the delivery state. */
export type NewOutboxMessage = Pick<OutboxMessage, 'id' | 'target' | 'idempotencyKey' | 'payload' | 'createdAtMs'>;

export interface OutboxStore {
  /**
   * Takes up to `limit` due pending messages of `target` for `leaseMs` (their next attempt
   * moves past the lease, so another worker does not take them meanwhile).
   */
  claimDue(target: string, nowMs: number, limit: number, leaseMs: number): Promise<OutboxMessage[]>;
  markSent(ids: readonly string[], nowMs: number): Promise<void>;
  markRetry(id: string, attempts: number, nextAttemptAtMs: number, error: string): Promise<void>;
  markDead(id: string, attempts: number, error: string): Promise<void>;
  /** Newest first; `after` is the last id of the previous page. */
  list(target: string, state: OutboxState, limit: number, after?: string): Promise<{ items: OutboxMessage[]; hasMore: boolean }>;
  /** A dead letter back to pending, due now, attempts reset; undefined when no such dead letter. */
  replay(target: string, id: string, nowMs: number): Promise<OutboxMessage | undefined>;
}
