/**
 * The end of a batch: finding batches whose every shard is done, leasing one to a single
 * finalizer, and the terminal transition, which registers the output files in the same
 * transaction so a batch is never terminal without its files, nor the files without it.
 * The same transaction drops the batch's line results and shards (see finish).
 */
import type { Database } from '../database.js';
import { fileRow } from './files.repository.js';
import { dropLedger } from './batch-line-results.repository.js';
import type { FileRecord } from '../../../domain/files/files.types.js';
import type { BatchStatus } from '../../../domain/batches/batch.types.js';
import type { BatchFinalizationLeaseStore, BatchFinalizationStore, TerminalPatch } from '../../../domain/batches/batch-stores.port.js';

const TIMESTAMP_OF = { completed: 'completed_at', expired: 'expired_at', cancelled: 'cancelled_at' } as const;
const FINISHABLE: BatchStatus[] = ['in_progress', 'finalizing', 'cancelling'];

export class BatchFinalizationRepository implements BatchFinalizationStore, BatchFinalizationLeaseStore {
  constructor(private readonly database: Database) {}

  /** Batches with all shards done and no live finalization lease. */
  async ready(nowMs: number, limit: number): Promise<string[]> {
    const rows = await this.database.db
      .selectFrom('batches as b')
      .select('b.id')
      .where('b.status', 'in', FINISHABLE)
      .where('b.shards_total', '>', 0)
      .where((eb) => eb.or([eb('b.lease_expires_at', 'is', null), eb('b.lease_expires_at', '<', nowMs)]))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('batch_shards as s')
              .select('s.id')
              .whereRef('s.batch_id', '=', 'b.id')
              .where('s.state', '=', 'pending'),
          ),
        ),
      )
      .orderBy('b.id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Takes the finalization lease; false when another finalizer holds it or the batch moved on. */
  async claim(id: string, owner: string, nowMs: number, leaseMs: number): Promise<BatchStatus | undefined> {
    const row = await this.database.db
      .updateTable('batches')
      .set({ lease_owner: owner, lease_expires_at: nowMs + leaseMs })
      .where('id', '=', id)
      .where('status', 'in', FINISHABLE)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowMs)]))
      .returning('status')
      .executeTakeFirst();
    return row ? (row.status as BatchStatus) : undefined;
  }

  async renew(id: string, owner: string, nowMs: number, leaseMs: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('batches')
      .set({ lease_expires_at: nowMs + leaseMs })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** in_progress → finalizing (the normal path). */
  async markFinalizing(id: string, nowMs: number): Promise<void> {
    await this.database.db
      .updateTable('batches')
      .set({ status: 'finalizing', finalizing_at: nowMs })
      .where('id', '=', id)
      .where('status', '=', 'in_progress')
      .execute();
  }

  /**
   * The terminal transition, conditional on the status the finalizer saw; inserts the
   * output file records with it. False (and nothing written) when the batch moved on.
   *
   * It also drops the line results and shards, here rather than in a later janitor pass:
   * once the files hold every line, the ledger's only remaining job is to stop a late
   * writer (a worker that lost its lease mid-line) from recording or billing a line
   * twice, and the terminal status does that job from this commit on (writes for an
   * ended batch are discarded, see BatchLineResultsRepository.insertMany). Doing both in
   * one transaction leaves no moment where the rows are gone and the batch still open, or
   * the batch ended with a ledger nobody will clear.
   */
  async finish(id: string, owner: string, from: BatchStatus, patch: TerminalPatch, files: readonly FileRecord[]): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('batches')
        .set({
          status: patch.status,
          [TIMESTAMP_OF[patch.status]]: patch.atMs,
          completed_lines: patch.counts.completed,
          failed_lines: patch.counts.failed,
          output_file_id: patch.outputFileId,
          error_file_id: patch.errorFileId,
          lease_owner: null,
          lease_expires_at: null,
        })
        .where('id', '=', id)
        .where('status', '=', from)
        .where('lease_owner', '=', owner)
        .returning('id')
        .executeTakeFirst();
      if (!updated) return false;
      if (files.length > 0) await trx.insertInto('files').values(files.map(fileRow)).execute();
      await dropLedger(trx, id);
      return true;
    });
  }

  async release(id: string, owner: string): Promise<void> {
    await this.database.db
      .updateTable('batches')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
  }
}
