/**
 * Where the spend report's daily rollups are kept (spend-rollups.ts keeps them): per
 * project and UTC day, the day's sums per key, model, tag and end user, and the end of
 * the days rolled up so far. Days are UTC day starts in ms.
 */
export interface SpendRollupStore {
  /** The start of the first day not rolled up yet; null before the rollups started. */
  rolledUntil(): Promise<number | null>;
  /** Starts the rollups at `dayMs` unless they have started already (another janitor). */
  start(dayMs: number): Promise<void>;
  /** The time of the oldest usage record (ms); null when there is none. */
  firstRecordMs(): Promise<number | null>;
  projectIds(): Promise<string[]>;
  /** Replaces the project's rollups of the days [fromDay, toDay) by the sums of its records, in one transaction. */
  roll(projectId: string, fromDay: number, toDay: number): Promise<void>;
  /** Moves `rolledUntil` from `fromDay` to `toDay`; false when it was not at `fromDay` any more. */
  advance(fromDay: number, toDay: number): Promise<boolean>;
  /** The days of [fromDay, toDay) whose rollups for the project count another number of records than the records do. */
  staleDays(projectId: string, fromDay: number, toDay: number): Promise<number[]>;
}
