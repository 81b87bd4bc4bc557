/**
 * The stores the batches service and the batch runner (src/worker) need; the repositories
 * in src/storage/db implement them.
 */
import type { Page } from '../shared/pagination.js';
import type { FileRecord } from '../files/files.types.js';
import type { UsageRecord } from '../billing/usage.types.js';
import type { OutboxEntry } from '../outbox/outbox.types.js';
import type {
  BatchError,
  BatchRecord,
  BatchRunInfo,
  BatchStatus,
  BatchUsage,
  LineGate,
  LineResult,
  RequestCounts,
  Shard,
  ShardPlan,
} from './batch.types.js';

/** A batch the validation sweep ended, with the input blob it may have been keeping alive. */
export interface SweptBatch {
  id: string;
  status: 'failed' | 'cancelled';
  inputBlobKey: string | null;
}

/** What ending a batch writes: its terminal status, when, its counts and its files. */
export interface TerminalPatch {
  status: Extract<BatchStatus, 'completed' | 'expired' | 'cancelled'>;
  atMs: number;
  counts: RequestCounts;
  outputFileId: string | null;
  errorFileId: string | null;
}

export interface ResultCounts {
  completed: number;
  failed: number;
}

export interface BatchStore {
  insert(batch: BatchRecord): Promise<void>;
  find(id: string): Promise<BatchRecord | undefined>;
  findForProject(projectId: string, id: string): Promise<BatchRecord | undefined>;
  listByProject(projectId: string, limit: number, after?: string): Promise<Page<BatchRecord>>;
  setInputBlob(id: string, blobKey: string): Promise<void>;
  /** Plans the shards and records the lines' model; false when the batch is no longer validating. */
  markValidated(id: string, totalLines: number, shards: readonly ShardPlan[], model?: string | null): Promise<boolean>;
  heartbeatValidation(id: string, nowMs: number): Promise<boolean>;
  sweepInterruptedValidations(staleBeforeMs: number, nowMs: number, errors: readonly BatchError[]): Promise<SweptBatch[]>;
  markFailed(id: string, errors: readonly BatchError[], nowMs: number): Promise<void>;
  requestCancel(projectId: string, id: string, nowMs: number): Promise<boolean>;
  markInProgress(id: string, nowMs: number): Promise<void>;
}

/** What the runner reads of a batch while it runs its lines. */
export interface BatchRunStore {
  find(id: string): Promise<BatchRecord | undefined>;
  /** What running the batch's lines needs; undefined when it has no input blob (yet). */
  runInfo(id: string): Promise<BatchRunInfo | undefined>;
  /** Status, window and creating key's state, read fresh before a line is dispatched. */
  lineGate(id: string): Promise<LineGate | undefined>;
}

/** Shard leases: a runner claims a shard, renews it while it works, and gives it back or marks it done. */
export interface BatchShardStore {
  /** Claims one pending, unleased shard (oldest batch first), or returns undefined. */
  claim(owner: string, nowMs: number, leaseMs: number): Promise<Shard | undefined>;
  /** Extends the leases this owner still holds; returns the ids it still holds. */
  renew(owner: string, ids: readonly string[], nowMs: number, leaseMs: number): Promise<Set<string>>;
  /** Gives a shard back at once (drain, or lines left undone) so another worker can take it. */
  release(owner: string, id: string): Promise<void>;
  /** Every line of the shard has its result. Idempotent, whoever holds the lease. */
  markDone(id: string): Promise<void>;
}

export interface BatchResultCounts {
  counts(batchIds: readonly string[]): Promise<Map<string, ResultCounts>>;
  /** The usage of the recorded lines of each batch (absent: none recorded). */
  usageOf(batchIds: readonly string[]): Promise<Map<string, BatchUsage>>;
}

/** One line's result, as the runner records it. */
export interface ResultEntry {
  result: LineResult;
  /** The usage the line's calls produced, written only if this entry is the one recorded. */
  usage: readonly UsageRecord[];
  /** Settlement messages of that usage, written with it. */
  outbox?: readonly OutboxEntry[];
}

/** Per-line results, first writer wins: what the runner records and the finalizer reads back. */
export interface BatchLineResultStore extends BatchResultCounts {
  /**
   * Records several lines in one transaction (group commit). Returns the indexes of the
   * entries this call inserted; only their usage is written and debited.
   */
  insertMany(entries: readonly ResultEntry[], nowMs: number): Promise<Set<number>>;
  /** Line numbers in [first, last] that already have a result. */
  doneLines(batchId: string, first: number, last: number): Promise<Set<number>>;
  countInRange(batchId: string, first: number, last: number): Promise<number>;
  hasErrorCode(batchId: string, code: string): Promise<boolean>;
  /** The recorded lines of one kind, in input order, a page at a time (never all in memory). */
  lines(batchId: string, ok: boolean): AsyncIterable<string>;
}

export interface BatchFinalizationStore {
  markFinalizing(id: string, nowMs: number): Promise<void>;
  /** Ends the batch held by `owner` (from status `from`) with its files and its lines' usage, in one transaction. */
  finish(id: string, owner: string, from: BatchStatus, patch: TerminalPatch, files: readonly FileRecord[]): Promise<boolean>;
}

/** The finalization lease: one finalizer at a time ends a batch whose shards are all done. */
export interface BatchFinalizationLeaseStore {
  /** Batches with all shards done and no live finalization lease. */
  ready(nowMs: number, limit: number): Promise<string[]>;
  /** Takes the lease and returns the batch's status; undefined when another finalizer holds it or the batch moved on. */
  claim(id: string, owner: string, nowMs: number, leaseMs: number): Promise<BatchStatus | undefined>;
  renew(id: string, owner: string, nowMs: number, leaseMs: number): Promise<boolean>;
  release(id: string, owner: string): Promise<void>;
}
