import type { PayerRef } from '../identity/payer.types.js';

/**
 * The usage record: one per billable call. The project is the tenant whose usage it is;
 * the payer is who was charged. Only a `project` payer's record debits that project's
 * credit, in the transaction that writes the record.
 */
export interface UsageRecord {
  id: string;
  projectId: string;
  keyId: string | null;
  payer: PayerRef;
  model: string;
  route: string;
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, those read from the engine's prompt cache (0 when it reported none). */
  cachedInputTokens?: number;
  /** Of inputTokens, those written to the engine's prompt cache. */
  cacheWriteTokens?: number;
  costMicros: number;
  requestId: string;
  status: number;
  createdAtMs: number;
  /** The operator-facing id of the upstream deployment that served the call; absent for in-process models. */
  deployment?: string | null;
  /** The coding agent's session the call belonged to (Claude Code's `X-Claude-Code-Session-Id`); absent without one. */
  sessionId?: string | null;
  /** The call's tags; absent or empty without any. */
  tags?: readonly string[] | null;
  /** The end user the client named; absent without one. */
  endUser?: string | null;
}
