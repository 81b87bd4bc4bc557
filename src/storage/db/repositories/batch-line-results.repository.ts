/**
 * Per-line results: one row per (batch_id, line_no), first writer wins. A line's usage
 * records are written, and its project debited, in the same transaction and only when
 * that transaction inserted the row, so a line that runs twice (lease lost, crash after
 * the upstream call) is still recorded and billed once.
 *
 * The rows are the ledger only while the batch runs: the transaction that ends a batch
 * drops them (dropLedger). From then on the batch's terminal status takes over the
 * ledger's job: a write for a batch that has ended is discarded in its own transaction
 * (see insertMany), so a late writer can never re-record, nor re-bill, a line whose row
 * is gone.
 */
import type { Kysely } from 'kysely';
import type { Database, Tables } from '../database.js';
import type { UsageRepository } from './usage.repository.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';
import { ACTIVE_STATUSES, NO_USAGE, type BatchUsage, type LineResult } from '../../../domain/batches/batch.types.js';
import type { BatchLineResultStore, ResultCounts, ResultEntry } from '../../../domain/batches/batch-stores.port.js';

/**
 * Writes the usage of a batch's recorded lines on the batch, then drops its line results
 * and shards; run inside the transaction that ends the batch, so the batch's usage is
 * the sum of the lines recorded (each once), however often they ran.
 */
export async function dropLedger(trx: Kysely<Tables>, batchId: string): Promise<void> {
  const [usage] = (await usageByBatch(trx, [batchId])).values();
  const sum = usage ?? NO_USAGE;
  await trx
    .updateTable('batches')
    .set({
      input_tokens: sum.inputTokens,
      cached_tokens: sum.cachedTokens,
      output_tokens: sum.outputTokens,
      reasoning_tokens: sum.reasoningTokens,
    })
    .where('id', '=', batchId)
    .execute();
  await trx.deleteFrom('batch_line_results').where('batch_id', '=', batchId).execute();
  await trx.deleteFrom('batch_shards').where('batch_id', '=', batchId).execute();
}

/** The usage of the recorded lines of each batch. */
async function usageByBatch(db: Kysely<Tables>, batchIds: readonly string[]): Promise<Map<string, BatchUsage>> {
  const rows = await db
    .selectFrom('batch_line_results')
    .select((eb) => [
      'batch_id',
      eb.fn.sum<number | string>('input_tokens').as('input_tokens'),
      eb.fn.sum<number | string>('cached_tokens').as('cached_tokens'),
      eb.fn.sum<number | string>('output_tokens').as('output_tokens'),
      eb.fn.sum<number | string>('reasoning_tokens').as('reasoning_tokens'),
    ])
    .where('batch_id', 'in', [...batchIds])
    .groupBy('batch_id')
    .execute();
  return new Map(
    rows.map((r) => [
      r.batch_id,
      {
        inputTokens: Number(r.input_tokens ?? 0),
        cachedTokens: Number(r.cached_tokens ?? 0),
        outputTokens: Number(r.output_tokens ?? 0),
        reasoningTokens: Number(r.reasoning_tokens ?? 0),
      },
    ]),
  );
}

const keyOf = (batchId: string, lineNo: number) => `${batchId}\n${lineNo}`;

const PAGE = 1_000;

export class BatchLineResultsRepository implements BatchLineResultStore {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageRepository,
  ) {}

  /** True when this call recorded the line (and wrote `usage`); false when it was already recorded. */
  async insert(result: LineResult, usage: readonly UsageRecord[], nowMs: number): Promise<boolean> {
    const inserted = await this.insertMany([{ result, usage }], nowMs);
    return inserted.has(0);
  }

  /**
   * Records several lines in one transaction (group commit). Returns the indexes of the
   * entries this call inserted; only their usage is written and debited.
   */
  async insertMany(entries: readonly ResultEntry[], nowMs: number): Promise<Set<number>> {
    if (entries.length === 0) return new Set();
    return this.database.db.transaction().execute(async (trx) => {
      const rows = await trx
        .insertInto('batch_line_results')
        .values(
          entries.map(({ result }) => ({
            batch_id: result.batchId,
            line_no: result.lineNo,
            ok: result.ok ? 1 : 0,
            error_code: result.errorCode,
            line_json: result.lineJson,
            created_at: nowMs,
            input_tokens: result.usage.inputTokens,
            cached_tokens: result.usage.cachedTokens,
            output_tokens: result.usage.outputTokens,
            reasoning_tokens: result.usage.reasoningTokens,
          })),
        )
        .onConflict((oc) => oc.columns(['batch_id', 'line_no']).doNothing())
        .returning(['batch_id', 'line_no'])
        .execute();
      const recorded = new Set(rows.map((r) => keyOf(r.batch_id, Number(r.line_no))));
      await this.#discardEnded(trx, rows, recorded);
      const inserted = new Set<number>();
      entries.forEach(({ result }, i) => {
        // delete(): should one flush carry the same line twice, only its first entry counts.
        if (recorded.delete(keyOf(result.batchId, result.lineNo))) inserted.add(i);
      });
      const written = [...inserted].map((i) => entries[i]!);
      await this.usage.recordAndDebitIn(
        trx,
        written.flatMap((e) => e.usage),
        written.flatMap((e) => e.outbox ?? []),
      );
      return inserted;
    });
  }

  /**
   * Takes back rows this transaction inserted for batches that have already ended (their
   * ledger is gone, so the insert did not conflict). Runs after the INSERT, which holds
   * SQLite's write lock already; on PostgreSQL the status is read FOR SHARE, and the
   * transition that ends a batch updates that row first, so either this transaction
   * commits before the batch ends (and the ending transaction drops its rows too), or it
   * waits and then sees the batch ended.
   */
  async #discardEnded(
    trx: Kysely<Tables>,
    rows: readonly { batch_id: string; line_no: number }[],
    recorded: Set<string>,
  ): Promise<void> {
    const batchIds = [...new Set(rows.map((r) => r.batch_id))];
    if (batchIds.length === 0) return;
    let open = trx.selectFrom('batches').select('id').where('id', 'in', batchIds).where('status', 'in', [...ACTIVE_STATUSES]);
    if (this.database.flavor === 'postgres') open = open.forShare();
    const running = new Set((await open.execute()).map((r) => r.id));
    for (const batchId of batchIds.filter((id) => !running.has(id))) {
      const lines = rows.filter((r) => r.batch_id === batchId).map((r) => Number(r.line_no));
      await trx.deleteFrom('batch_line_results').where('batch_id', '=', batchId).where('line_no', 'in', lines).execute();
      for (const line of lines) recorded.delete(keyOf(batchId, line));
    }
  }

  /** Line numbers in [first, last] that already have a result. */
  async doneLines(batchId: string, first: number, last: number): Promise<Set<number>> {
    const rows = await this.database.db
      .selectFrom('batch_line_results')
      .select('line_no')
      .where('batch_id', '=', batchId)
      .where('line_no', '>=', first)
      .where('line_no', '<=', last)
      .execute();
    return new Set(rows.map((r) => Number(r.line_no)));
  }

  async countInRange(batchId: string, first: number, last: number): Promise<number> {
    const row = await this.database.db
      .selectFrom('batch_line_results')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('batch_id', '=', batchId)
      .where('line_no', '>=', first)
      .where('line_no', '<=', last)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Live request counts of the given batches. */
  async counts(batchIds: readonly string[]): Promise<Map<string, ResultCounts>> {
    const counts = new Map<string, ResultCounts>();
    if (batchIds.length === 0) return counts;
    const rows = await this.database.db
      .selectFrom('batch_line_results')
      .select((eb) => ['batch_id', 'ok', eb.fn.countAll<number>().as('n')])
      .where('batch_id', 'in', [...batchIds])
      .groupBy(['batch_id', 'ok'])
      .execute();
    for (const row of rows) {
      const entry = counts.get(row.batch_id) ?? { completed: 0, failed: 0 };
      if (Number(row.ok) === 1) entry.completed += Number(row.n);
      else entry.failed += Number(row.n);
      counts.set(row.batch_id, entry);
    }
    return counts;
  }

  /** Live usage of the given batches: the sum over their recorded lines. */
  async usageOf(batchIds: readonly string[]): Promise<Map<string, BatchUsage>> {
    if (batchIds.length === 0) return new Map();
    return usageByBatch(this.database.db, batchIds);
  }

  async hasErrorCode(batchId: string, code: string): Promise<boolean> {
    const row = await this.database.db
      .selectFrom('batch_line_results')
      .select('line_no')
      .where('batch_id', '=', batchId)
      .where('error_code', '=', code)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The recorded lines of one kind, in input order, a page at a time (never all in memory). */
  async *lines(batchId: string, ok: boolean): AsyncGenerator<string> {
    let after = 0;
    for (;;) {
      const rows = await this.database.db
        .selectFrom('batch_line_results')
        .select(['line_no', 'line_json'])
        .where('batch_id', '=', batchId)
        .where('ok', '=', ok ? 1 : 0)
        .where('line_no', '>', after)
        .orderBy('line_no')
        .limit(PAGE)
        .execute();
      for (const row of rows) yield row.line_json;
      if (rows.length < PAGE) return;
      after = Number(rows[rows.length - 1]!.line_no);
    }
  }
}
