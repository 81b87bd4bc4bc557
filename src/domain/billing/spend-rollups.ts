/**
 * The spend report's daily rollups, kept by the janitor (src/worker/janitor.ts) off the hot
 * path: settling a call writes its usage record as before, and nothing more. A report reads
 * the rollups for the whole days of its range that are rolled up, and the records for the
 * rest (today, the days not rolled up yet, and the partial days at the edges of a range that
 * does not start or end on a UTC day boundary), so its answer is the records' own sums.
 *
 * Chosen over summing in the usage transaction: that would add an upsert per dimension to
 * every settlement, which the CPU per call cannot afford, and make concurrent calls contend
 * on the same rollup rows.
 *
 * Records arriving late. A record's time is the settling process's clock when it settles,
 * so it reaches the database within the commit's latency and the clocks' skew. A day is
 * rolled up only once it ended `marginMs` (an hour) ago. A record later than that (a clock
 * far off) is not lost: every `recheckEveryMs` (ten minutes) each project's last
 * `recheckDays` (seven) rolled-up days are checked, the records' count against the count the
 * rollups hold (records are never edited or removed, so an equal count is the same records),
 * and a day that differs is rolled up again. Until then a report leaves such a record out.
 *
 * Several janitors (replicas, `sluice worker`) may run this at once: a day's rollups are
 * replaced in one transaction that locks the state row, and the state moves on only from
 * the day it was at.
 */
import type { Clock } from '../shared/clock.js';
import type { SpendRollupStore } from './spend-rollups.port.js';

export const DAY_MS = 86_400_000;

export interface SpendRollupOptions {
  /** How long after a day ends it is rolled up. */
  marginMs: number;
  /** How often rolled-up days are checked against the records. */
  recheckEveryMs: number;
  /** How many of the last rolled-up days are checked. */
  recheckDays: number;
  /** The most days one pass rolls up (a first pass over a long history takes several). */
  maxDaysPerPass: number;
}

export const SPEND_ROLLUP_DEFAULTS: SpendRollupOptions = { marginMs: 3_600_000, recheckEveryMs: 600_000, recheckDays: 7, maxDaysPerPass: 7 };

const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

export class SpendRollups {
  #lastRecheckMs = Number.NEGATIVE_INFINITY;
  readonly #options: SpendRollupOptions;

  constructor(
    private readonly store: SpendRollupStore,
    private readonly clock: Clock,
    options: Partial<SpendRollupOptions> = {},
  ) {
    this.#options = { ...SPEND_ROLLUP_DEFAULTS, ...options };
  }

  /** One pass: rolls up the days that closed, and rolls up again the days that records reached late. Returns how many days it rolled up. */
  async run(): Promise<number> {
    const nowMs = this.clock.nowMs();
    const closedUntil = dayStart(nowMs - this.#options.marginMs);
    const rolledUntil = await this.#rolledUntil(closedUntil);
    let rolled = await this.#rollClosedDays(rolledUntil, closedUntil);
    if (nowMs - this.#lastRecheckMs >= this.#options.recheckEveryMs) {
      this.#lastRecheckMs = nowMs;
      rolled += await this.#rollStaleDays();
    }
    return rolled;
  }

  /** The state, started on the first pass at the oldest record's day (or, with none, at the last closed day). */
  async #rolledUntil(closedUntil: number): Promise<number> {
    const until = await this.store.rolledUntil();
    if (until !== null) return until;
    const first = await this.store.firstRecordMs();
    await this.store.start(first === null ? closedUntil : Math.min(dayStart(first), closedUntil));
    return (await this.store.rolledUntil())!;
  }

  async #rollClosedDays(from: number, closedUntil: number): Promise<number> {
    let day = from;
    let rolled = 0;
    const projects = day < closedUntil ? await this.store.projectIds() : [];
    while (day < closedUntil && rolled < this.#options.maxDaysPerPass) {
      for (const projectId of projects) await this.store.roll(projectId, day, day + DAY_MS);
      if (!(await this.store.advance(day, day + DAY_MS))) break;
      day += DAY_MS;
      rolled++;
    }
    return rolled;
  }

  async #rollStaleDays(): Promise<number> {
    const until = await this.store.rolledUntil();
    if (until === null) return 0;
    const from = until - this.#options.recheckDays * DAY_MS;
    let rolled = 0;
    for (const projectId of await this.store.projectIds()) {
      for (const day of await this.store.staleDays(projectId, from, until)) {
        await this.store.roll(projectId, day, day + DAY_MS);
        rolled++;
      }
    }
    return rolled;
  }
}
