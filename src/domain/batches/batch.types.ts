/** Batch records, statuses and the limits of the spec. */
import type { PayerRef } from '../identity/payer.types.js';
import type { KeyPolicy } from '../identity/key-policy.types.js';

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

/** The endpoints a batch may use unless `batches.endpoints` in sluice.yaml says otherwise: the spec's. */
export const BATCH_ENDPOINTS: readonly string[] = ['/v1/chat/completions'];
export const COMPLETION_WINDOW = '24h';

/** OpenAI's bounds of `output_expires_after.seconds`: one hour to 30 days. */
export const MIN_OUTPUT_EXPIRY_SECONDS = 3_600;
export const MAX_OUTPUT_EXPIRY_SECONDS = 2_592_000;

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

/** Tokens used by a batch's lines, summed (OpenAI's batch `usage`, in domain terms). */
export interface BatchUsage {
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export const NO_USAGE: BatchUsage = { inputTokens: 0, cachedTokens: 0, outputTokens: 0, reasoningTokens: 0 };

export interface BatchRecord {
  id: string;
  projectId: string;
  createdByKeyId: string | null;
  /** Who pays for the lines: the creating caller's payer. Never shown to clients. */
  payer: PayerRef;
  endpoint: string;
  /** The model its lines name (the first line's `body.model`); null until validated, and for lines without one. */
  model: string | null;
  inputFileId: string;
  inputBlobKey: string | null;
  completionWindow: string;
  /** `output_expires_after.seconds`: the output and error files expire this long after they are written; null: the files' default. */
  outputExpiresAfterSeconds: number | null;
  status: BatchStatus;
  metadata: Record<string, unknown>;
  errors: BatchError[] | null;
  requestCounts: RequestCounts;
  /** Summed over the recorded lines: live while the batch runs, fixed when it ends. */
  usage: BatchUsage;
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
  /** What the line's call used (zero for a line that did not run); summed into the batch's usage. */
  usage: BatchUsage;
}

/** What a runner needs to know about a batch before it dispatches a line. */
export interface LineGate {
  status: BatchStatus;
  expiresAtMs: number;
  /** The creating key was revoked (or deleted) since the batch was created. */
  keyRevoked: boolean;
  /** The creating key's policy as it is now (its lines run under it); null when it sets none. */
  keyPolicy: KeyPolicy | null;
}

/** What a runner needs to execute a batch's lines. */
export interface BatchRunInfo {
  id: string;
  projectId: string;
  createdByKeyId: string | null;
  /** As BatchRecord.payer: selects the meter of each line. */
  payer: PayerRef;
  /** The endpoint every line uses: selects the service that runs them. */
  endpoint: string;
  inputFileId: string;
  inputBlobKey: string;
  status: BatchStatus;
  expiresAtMs: number;
  /** As BatchRecord.traceParent. */
  traceParent: string | null;
}
