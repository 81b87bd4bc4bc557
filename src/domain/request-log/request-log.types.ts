/**
 * The request log's records: one per call, on every route and scope, with the call's
 * story (its attempts, the model and deployment that served, its usage, cost, hold and
 * settlement, and where its time went) and, when the project logs bodies, its request and
 * answer. Times are epoch milliseconds; money is integer micro-dollars.
 */

/** What a project keeps of a call's bodies: nothing, the bodies with secrets removed, or the bodies as sent. */
export type BodyMode = 'off' | 'redacted' | 'full';

export const BODY_MODES: readonly BodyMode[] = ['off', 'redacted', 'full'];

/** A project's logging settings (`logging.bodies`, `logging.retention_days`). */
export interface LoggingSettings {
  bodies: BodyMode;
  retentionDays: number;
}

/** Which part of the service a call came through. */
export type CallScope = 'v1' | 'gateway' | 'storefront' | 'mcp' | 'batch';

/** One try of one deployment: its status (null when it never answered), error code and timing from the call's start. */
export interface AttemptEntry {
  deployment: string;
  provider: string | null;
  status: number | null;
  errorCode: string | null;
  startedMs: number;
  durationMs: number;
}

export interface RequestLogEntry {
  id: string;
  projectId: string;
  keyId: string | null;
  createdAtMs: number;
  route: string;
  wire: string;
  scope: CallScope;
  modelRequested: string;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  status: number;
  errorCode: string | null;
  stream: boolean;
  sessionId: string | null;
  endUser: string | null;
  tags: readonly string[];
  batchId: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costMicros: number;
  creditWaitMs: number | null;
  firstByteMs: number | null;
  engineMs: number | null;
  totalMs: number;
  attempts: readonly AttemptEntry[];
  fallback: boolean;
  toolsCalled: readonly string[];
  holdMicros: number | null;
  settledMicros: number | null;
  bodyLogged: boolean;
}

/** The list's filters; every one optional. `status` is a status, or `error` (any status ≥ 400). */
export interface RequestLogFilter {
  projectId: string | null;
  keyId?: string;
  model?: string;
  status?: number | 'error';
  tag?: string;
  sessionId?: string;
  sinceMs?: number;
  untilMs?: number;
  minCostMicros?: number;
}

/** A session's calls (oldest first, up to a limit) and their sums. */
export interface RequestSession {
  id: string;
  requests: number;
  firstAtMs: number;
  lastAtMs: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costMicros: number;
  entries: RequestLogEntry[];
}
