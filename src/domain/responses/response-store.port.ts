/**
 * Where stored responses live: the database, shared by every replica and worker. Every
 * read and write names the response's tenant (`ResponseOwner`): another project's id, or
 * another agent's in a shared project, is simply not found. A response is kept until it
 * expires (`responses.retention_days`), when the janitor sweeps it with its events.
 *
 * Background responses add a queue on the same rows: a worker claims one by lease, appends
 * the run's events while it holds the lease, and settles it once: the final object, the
 * conversation and the usage records are written in one transaction that only the
 * lease's holder, and only once, can commit (`settled`), so a run is billed at most once
 * whatever happens to its worker.
 */
import type { PayerRef } from '../identity/payer.types.js';
import type { UsageRecord } from '../billing/usage.types.js';
import type { OutboxEntry } from '../outbox/outbox.types.js';
import type { Page } from '../shared/pagination.js';

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled';

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'incomplete', 'cancelled']);

/** Whose a response is: its project, and the caller's subject within it ('' for the project's own keys). */
export interface ResponseOwner {
  projectId: string;
  subject: string;
}

/** One item of a response's input or output, as the Responses API shows it (with its `id`). */
export type ResponseItem = Record<string, unknown> & { id?: string; type?: string };

export interface StoredResponse {
  id: string;
  status: ResponseStatus;
  background: boolean;
  /** The Responses object as last known. */
  resource: Record<string, unknown>;
  /** The earlier turns, this turn's input and its output: what `previous_response_id` continues; null until the response ends. */
  conversation: ResponseItem[] | null;
  createdAtMs: number;
}

/** A response to store: a foreground one when it has ended, a background one when it is queued. */
export interface NewStoredResponse {
  id: string;
  owner: ResponseOwner;
  status: ResponseStatus;
  resource: Record<string, unknown>;
  inputItems: readonly ResponseItem[];
  conversation: readonly ResponseItem[] | null;
  createdAtMs: number;
  expiresAtMs: number;
}

/** What a background run needs besides the stored response: the request, the turns before it and who pays. */
export interface BackgroundRequest {
  body: Record<string, unknown>;
  priorItems: readonly ResponseItem[];
  keyId: string | null;
  payer: PayerRef;
  requestId: string;
}

/** A claimed background response. */
export interface BackgroundJob extends BackgroundRequest {
  id: string;
  owner: ResponseOwner;
  /** `cancelled` when it was cancelled while a worker that has since died ran it. */
  status: ResponseStatus;
  inputItems: ResponseItem[];
  resource: Record<string, unknown>;
  /** This claim's number (1 for the first run). */
  attempt: number;
  /** Events already stored by earlier runs. */
  eventCount: number;
  /** An earlier run stored events past `response.created`/`response.in_progress`: a client may have seen part of its answer. */
  answerStarted: boolean;
}

export interface StoredEvent {
  seq: number;
  event: Record<string, unknown>;
}

/** How a background run ends: its object, its conversation, its usage (written only if this settles it). */
export interface Settlement {
  resource: Record<string, unknown>;
  conversation: readonly ResponseItem[] | null;
  /** Events not yet appended, the terminal one last. */
  events: readonly StoredEvent[];
  usage: readonly UsageRecord[];
  outbox: readonly OutboxEntry[];
}

export interface InputItemsQuery {
  after: string | undefined;
  limit: number;
  order: 'asc' | 'desc';
}

export interface ResponseStore {
  insert(response: NewStoredResponse, background?: BackgroundRequest): Promise<void>;
  find(owner: ResponseOwner, id: string, nowMs: number): Promise<StoredResponse | undefined>;
  /** A page of this turn's input items; undefined when the response is not found. An unknown `after` is the end of the list. */
  inputItems(owner: ResponseOwner, id: string, query: InputItemsQuery, nowMs: number): Promise<Page<ResponseItem> | undefined>;
  /** Deletes a response and its events; false when it was not found. */
  delete(owner: ResponseOwner, id: string, nowMs: number): Promise<boolean>;
  /** Deletes responses (and their events) that expired before `nowMs`, at most `limit` of them; returns how many. */
  sweepExpired(nowMs: number, limit: number): Promise<number>;
}

export interface BackgroundQueue {
  /** Claims one queued background response, or one whose run's lease expired unsettled, or returns undefined. */
  claim(worker: string, nowMs: number, leaseMs: number): Promise<BackgroundJob | undefined>;
  /** Extends the leases `worker` holds on responses still running; returns those ids (a cancelled one is not among them). */
  renew(worker: string, ids: readonly string[], nowMs: number, leaseMs: number): Promise<Set<string>>;
  /** Gives a lease back unsettled (the worker is draining): another worker runs the response again. */
  release(worker: string, id: string): Promise<void>;
  /**
   * Appends events while `worker` holds the lease and the response runs; the object as
   * last known is replaced when `resource` is given. False when it no longer runs for
   * this worker (cancelled, deleted, lease lost).
   */
  append(worker: string, id: string, events: readonly StoredEvent[], resource: Record<string, unknown> | null, answerStarted: boolean): Promise<boolean>;
  /**
   * Settles the run: when it still runs, its final object and conversation; when it was
   * cancelled, the cancelled object stays. Writes the usage and events. False (and writes
   * nothing) when it was settled already or the lease is no longer `worker`'s.
   */
  settle(worker: string, id: string, settlement: Settlement): Promise<boolean>;
  /** Marks a background response cancelled, when it is queued or running: the new object, or undefined when it was not. */
  cancel(owner: ResponseOwner, id: string, nowMs: number): Promise<{ resource: Record<string, unknown>; running: boolean } | undefined>;
  /** Stored events with `seq` greater than `after`, in order, at most `limit`. */
  eventsAfter(id: string, after: number, limit: number): Promise<StoredEvent[]>;
  /** The status and whether the run is settled (no more events will come); undefined when it is gone. */
  progress(id: string): Promise<{ status: ResponseStatus; settled: boolean } | undefined>;
}
