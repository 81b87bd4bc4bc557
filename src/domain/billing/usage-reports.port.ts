/** Usage summed per time bucket (and per model, key or project), as the database aggregates it. */

export type UsageGroup = 'model' | 'key' | 'project';

export interface UsageReportQuery {
  /** null: every project (the operator). */
  projectId: string | null;
  startMs: number;
  endMs: number;
  bucketMs: number;
  groupBy: UsageGroup | null;
}

export interface UsageBucketRow {
  bucketStartMs: number;
  /** The model, key id or project id of the row; null when not grouped (or a call made with no key). */
  group: string | null;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, those read from / written to an engine's prompt cache. */
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costMicros: number;
}

export interface UsageReports {
  aggregate(query: UsageReportQuery): Promise<UsageBucketRow[]>;
  /** Each key's last usage record time (ms), for the keys of one project that have any. */
  lastUsedByKey(projectId: string): Promise<Map<string, number>>;
}
