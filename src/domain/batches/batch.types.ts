/** Batch records, statuses and the limits of the spec. */
import type { PayerRef } from '../identity/payer.types.js';

export type BatchStatus =
  | 'validating'
  | 'in_progress'
  | 'finalizing'
  | 'completed'
  | 'failed'
  | 'expired'
  | 'cancelling'
  | 'cancelled';

export const TERMINAL_STATUSES: ReadonlySet<BatchStatus> = new Set(['completed', 'failed', 'expired', 'cancelled']);
/** Statuses in which a batch may still need its input. */
export const ACTIVE_STATUSES: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];
/** Statuses from which `cancel` moves a batch to `cancelling`. */
export const CANCELLABLE_STATUSES: readonly BatchStatus[] = ['validating', 'in_progress'];

export const isTerminal = (status: BatchStatus): boolean => TERMINAL_STATUSES.has(status);

export const BATCH_ENDPOINTS: readonly string[] = ['/v1/chat/completions'];
export const COMPLETION_WINDOW = '24h';

export const MAX_INPUT_BYTES = 209_715_200;
export const MAX_INPUT_LINES = 50_000;
export const MAX_LINE_BYTES = 1_048_576;
export const MAX_BATCH_PAGE = 100;
export const DEFAULT_BATCH_PAGE = 20;

export interface BatchError {
  code: string;
  message: string;
  line: number | null;
  param: string | null;
}

export interface RequestCounts {
  total: number;
  completed: number;
  failed: number;
}

export interface BatchRecord {
  id: string;
  projectId: string;
  createdByKeyId: string | null;
  /** Who pays for the lines: the creating caller's payer. Never shown to clients. */
  payer: PayerRef;
  endpoint: string;
  inputFileId: string;
  inputBlobKey: string | null;
  completionWindow: string;
  status: BatchStatus;
  metadata: Record<string, unknown>;
  errors: BatchError[] | null;
  requestCounts: RequestCounts;
  outputFileId: string | null;
  errorFileId: string | null;
  createdAtMs: number;
  expiresAtMs: number;
  inProgressAtMs: number | null;
  finalizingAtMs: number | null;
  completedAtMs: number | null;
  failedAtMs: number | null;
  expiredAtMs: number | null;
  cancellingAtMs: number | null;
  cancelledAtMs: number | null;
  /** W3C traceparent of the creating request when tracing was on: its lines' spans link to it. Never shown to clients. */
  traceParent: string | null;
}

/** A contiguous slice of the input: physical lines first..last, bytes [start, end). */
export interface ShardPlan {
  shardNo: number;
  firstLine: number;
  lastLine: number;
  startByte: number;
  endByte: number;
  /** Request (non-blank) lines in the slice. */
  lineCount: number;
}

export interface Shard extends ShardPlan {
  id: string;
  batchId: string;
}

/** The finished outcome of one input line: exactly one per (batch, line). */
export interface LineResult {
  batchId: string;
  lineNo: number;
  ok: boolean;
  errorCode: string | null;
  /** The output- or error-file line, JSON without the newline. */
  lineJson: string;
}

/** What a runner needs to know about a batch before it dispatches a line. */
export interface LineGate {
  status: BatchStatus;
  expiresAtMs: number;
  /** The creating key was revoked (or deleted) since the batch was created. */
  keyRevoked: boolean;
}

/** What a runner needs to execute a batch's lines. */
export interface BatchRunInfo {
  id: string;
  projectId: string;
  createdByKeyId: string | null;
  /** As BatchRecord.payer: selects the meter of each line. */
  payer: PayerRef;
  inputFileId: string;
  inputBlobKey: string;
  status: BatchStatus;
  expiresAtMs: number;
  /** As BatchRecord.traceParent. */
  traceParent: string | null;
}
