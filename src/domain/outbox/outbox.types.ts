/**
 * The settlement outbox: messages to third parties (an intermediary's usage report, for
 * one) that must follow a usage record without the request waiting on the network. A
 * message is written in the usage record's own transaction (so it exists exactly when
 * the record does) and delivered later by the OutboxDeliverer (src/worker), through the
 * handler a feature registered for its target kind. Delivery is at least once; the
 * idempotency key lets the receiver drop a repeat.
 */
import type { Page } from '../shared/pagination.js';
import { newId } from '../shared/ids.js';

export type OutboxState = 'pending' | 'delivered' | 'dead';

/** What a meter enqueues. */
export interface OutboxMessage {
  /** Selects the handler ('intermediary', ...). */
  targetKind: string;
  /**
   * What the receiver dedupes on. A settlement is enqueued once, with its call's usage record;
   * the key is not unique in the store (an intermediary may reuse a request id for a later call).
   */
  idempotencyKey: string;
  /** JSON-serializable. */
  payload: unknown;
}

export interface OutboxEntry extends OutboxMessage {
  id: string;
  state: OutboxState;
  /** Deliveries begun (a claim counts, so an entry that kills its deliverer still goes dead). */
  attempts: number;
  nextAttemptAtMs: number;
  /** Why the last attempt failed: the error's kind and message only, never a request or its credentials. */
  lastError: string | null;
  createdAtMs: number;
  deliveredAtMs: number | null;
  /** Set on an entry written already leased to a deliverer (OutboxLease); the store's claims set their own. */
  lease?: OutboxLease;
}

/**
 * A lease an entry is written with: the deliverer of the process that writes it takes it
 * from memory (no claim, no read back), and if that process dies first, any deliverer
 * claims it once the lease has run out.
 */
export interface OutboxLease {
  owner: string;
  expiresAtMs: number;
}

/** What writes entries asks of this process's deliverer. */
export interface OutboxIntake {
  /** The entries of the messages one transaction writes: combined where their handler can (outboxEntriesOf), leased here while a deliverer runs. */
  entriesFor(messages: readonly OutboxMessage[], nowMs: number): OutboxEntry[];
  /** Entries just committed (the leased ones are delivered from memory; any others are looked for). */
  committed(entries: readonly OutboxEntry[]): void;
}

/** A pending entry; written with `lease`, it counts its first attempt (as a claim would). */
export function newOutboxEntry(message: OutboxMessage, nowMs: number, lease: OutboxLease | null = null): OutboxEntry {
  const entry: OutboxEntry = {
    id: newId('outbox_'),
    targetKind: message.targetKind,
    idempotencyKey: message.idempotencyKey,
    payload: message.payload,
    state: 'pending',
    attempts: lease ? 1 : 0,
    nextAttemptAtMs: nowMs,
    lastError: null,
    createdAtMs: nowMs,
    deliveredAtMs: null,
  };
  if (lease) entry.lease = lease;
  return entry;
}

/**
 * The entries of the messages one transaction writes, with `lease`: a target kind's
 * messages become one entry where its handler can combine them (several calls' usage
 * reports under load: one row to write and one to mark delivered for the lot, instead of
 * one per call), else one entry each.
 */
export function outboxEntriesOf(messages: readonly OutboxMessage[], handlers: OutboxHandlers, nowMs: number, lease: OutboxLease | null): OutboxEntry[] {
  if (messages.length <= 1) return messages.map((message) => newOutboxEntry(message, nowMs, lease));
  const byKind = new Map<string, OutboxMessage[]>();
  for (const message of messages) {
    const ofKind = byKind.get(message.targetKind);
    if (ofKind) ofKind.push(message);
    else byKind.set(message.targetKind, [message]);
  }
  const entries: OutboxEntry[] = [];
  for (const [kind, ofKind] of byKind) {
    const combine = handlers.get(kind)?.combine;
    const folded = combine && ofKind.length > 1 ? [combine(ofKind)] : ofKind;
    for (const message of folded) entries.push(newOutboxEntry(message, nowMs, lease));
  }
  return entries;
}

/**
 * What a handler says of an attempt the target did not accept. `retry` goes again after
 * the backoff, or after `retryAfterMs` when the target said when (`Retry-After`), whichever
 * is later; `rejected` will never be accepted as sent, so the entry is dead at once (an
 * operator may replay it). A handler that throws is a `retry`.
 */
export type DeliveryRefusal = { kind: 'retry'; cause: string; retryAfterMs?: number | null } | { kind: 'rejected'; cause: string };

/** Delivers entries to their target; resolves (with nothing) once the target accepted them. */
export interface OutboxHandler {
  deliver(entry: OutboxEntry, signal: AbortSignal): Promise<void | DeliveryRefusal>;
  /**
   * Optional: delivers several entries in one exchange, all accepted or none (the deliverer
   * then retries each entry on its own, so one refused entry does not sink its batch).
   * Under load this is what keeps delivery cheap: one request and one UPDATE per pass.
   */
  deliverMany?(entries: readonly OutboxEntry[], signal: AbortSignal): Promise<void | DeliveryRefusal>;
  /**
   * Optional: one message meaning what all of `messages` (two or more, of this kind,
   * written in one transaction) mean, so they are stored and delivered as one entry.
   */
  combine?(messages: readonly OutboxMessage[]): OutboxMessage;
  /**
   * Optional, with `combine`: a combined entry's messages again. When the target refuses
   * a combined entry for good, the deliverer puts its parts back one entry each, so only
   * the part the target refuses dies.
   */
  split?(entry: OutboxEntry): OutboxMessage[];
}

/** Handlers by target kind; features register theirs in the composition root. */
export type OutboxHandlers = Map<string, OutboxHandler>;

/** Which entries an operator lists: every one, or those of one state and/or target kind. */
export interface OutboxFilter {
  state?: OutboxState;
  targetKind?: string;
}

export const OUTBOX_STATES: readonly OutboxState[] = ['pending', 'delivered', 'dead'];

export interface OutboxStore {
  /**
   * Leases up to `limit` pending entries due at `nowMs` to `owner` and counts an attempt
   * on each. An entry is leased to one owner at a time, across processes.
   */
  claimDue(owner: string, nowMs: number, leaseMs: number, limit: number): Promise<OutboxEntry[]>;
  /** False when `owner` no longer held the entry. */
  markDelivered(id: string, owner: string, nowMs: number): Promise<boolean>;
  /** markDelivered for many entries in one statement; returns the ids `owner` still held. */
  markDeliveredMany(ids: readonly string[], owner: string, nowMs: number): Promise<string[]>;
  /** Back to pending, due at `nextAttemptAtMs`. */
  reschedule(id: string, owner: string, nextAttemptAtMs: number, error: string): Promise<boolean>;
  markDead(id: string, owner: string, error: string): Promise<boolean>;
  /** Replaces the entry `owner` holds with `parts`, in one transaction; false when it no longer held it. */
  split(id: string, owner: string, parts: readonly OutboxEntry[]): Promise<boolean>;
  find(id: string): Promise<OutboxEntry | undefined>;
  /** Entries of every state (or of `filter`'s), newest first; `after` is the id of the last entry of the previous page. */
  list(filter: OutboxFilter, limit: number, after?: string): Promise<Page<OutboxEntry>>;
  /** Dead entries, oldest first; `after` is the id of the last entry of the previous page. */
  listDead(limit: number, after?: string): Promise<Page<OutboxEntry>>;
  /** A dead entry back to pending with no attempts, due at `nowMs`; false when it was not dead. */
  replay(id: string, nowMs: number): Promise<boolean>;
  /** Deletes entries delivered before `deliveredBeforeMs`; returns how many. */
  purgeDelivered(deliveredBeforeMs: number): Promise<number>;
}

const MAX_ERROR_CHARS = 300;

/** What an attempt's failure leaves on the entry: its kind and message, bounded. */
export function describeFailure(err: unknown): string {
  const kind = err instanceof Error ? ((err as { kind?: unknown }).kind ?? err.name) : 'Error';
  const message = err instanceof Error ? err.message : String(err);
  return `${String(kind)}: ${message}`.slice(0, MAX_ERROR_CHARS);
}

/** Delay before attempt `attempts + 1`: doubling from `baseMs` up to `capMs`, with jitter (50–100 % of the step). */
export function outboxBackoffMs(attempts: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const step = Math.min(capMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(step / 2 + random() * (step / 2));
}
