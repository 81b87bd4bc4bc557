/**
 * Usage summed per time bucket (and per model, key, project, tag or end user), and spend
 * summed per group over a range, as the database aggregates them.
 */

export type UsageGroup = 'model' | 'key' | 'project' | 'tag' | 'end_user';

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
  /** The model, key id, project id, tag or end user of the row; null when not grouped (or a call made with no key, or naming no end user). */
  group: string | null;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens, those read from / written to an engine's prompt cache. */
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costMicros: number;
}

/** What a spend report groups by: the key, the model, the tag, the end user, or the UTC day. */
export type SpendGroup = 'key' | 'model' | 'tag' | 'end_user' | 'day';

export interface SpendQuery {
  /** null: every project (the operator). */
  projectId: string | null;
  sinceMs: number;
  untilMs: number;
  groupBy: SpendGroup;
}

/** One group's sums over the range. A call with several tags counts under each; a call with none, under no tag. */
export interface SpendRow {
  /** The key id, model, tag, end user or day (`YYYY-MM-DD`); null for calls made with no key or naming no end user. */
  group: string | null;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  costMicros: number;
}

export interface UsageReports {
  aggregate(query: UsageReportQuery): Promise<UsageBucketRow[]>;
  /**
   * The spend report's rows in the order of their group (null first), aggregated once and
   * read a page at a time as they are iterated; ending the iteration early frees what the
   * database holds for it.
   */
  spend(query: SpendQuery): AsyncIterable<SpendRow>;
  /** Each key's last usage record time (ms), for the keys of one project that have any. */
  lastUsedByKey(projectId: string): Promise<Map<string, number>>;
}
