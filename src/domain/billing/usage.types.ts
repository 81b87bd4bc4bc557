/** The usage record: one per billable call, written with its project's debit. */
export interface UsageRecord {
  id: string;
  projectId: string;
  keyId: string | null;
  model: string;
  route: string;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  requestId: string;
  status: number;
  createdAtMs: number;
}
