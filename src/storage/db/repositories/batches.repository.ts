import type { ExpressionBuilder, Selectable } from 'kysely';
import type { BatchesTable, Database, Tables } from '../database.js';
import { dropLedger } from './batch-line-results.repository.js';
import { payerOfRow } from './payer-columns.js';
import { policyOf } from './api-keys.repository.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { BatchRunStore, BatchStore, SweptBatch } from '../../../domain/batches/batch-stores.port.js';
import {
  ACTIVE_STATUSES,
  CANCELLABLE_STATUSES,
  type BatchError,
  type BatchRecord,
  type BatchRunInfo,
  type BatchStatus,
  type LineGate,
  type ShardPlan,
} from '../../../domain/batches/batch.types.js';

const ms = (value: number | null): number | null => (value === null ? null : Number(value));

const toBatch = (row: Selectable<BatchesTable>): BatchRecord => ({
  id: row.id,
  projectId: row.project_id,
  createdByKeyId: row.created_by_key_id,
  payer: payerOfRow(row),
  endpoint: row.endpoint,
  model: row.model,
  inputFileId: row.input_file_id,
  inputBlobKey: row.input_blob_key,
  completionWindow: row.completion_window,
  outputExpiresAfterSeconds: row.output_expires_after === null ? null : Number(row.output_expires_after),
  status: row.status as BatchStatus,
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  errors: row.errors === null ? null : (JSON.parse(row.errors) as BatchError[]),
  requestCounts: { total: Number(row.total_lines), completed: Number(row.completed_lines), failed: Number(row.failed_lines) },
  usage: {
    inputTokens: Number(row.input_tokens),
    cachedTokens: Number(row.cached_tokens),
    outputTokens: Number(row.output_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
  },
  outputFileId: row.output_file_id,
  errorFileId: row.error_file_id,
  createdAtMs: Number(row.created_at),
  expiresAtMs: Number(row.expires_at),
  inProgressAtMs: ms(row.in_progress_at),
  finalizingAtMs: ms(row.finalizing_at),
  completedAtMs: ms(row.completed_at),
  failedAtMs: ms(row.failed_at),
  expiredAtMs: ms(row.expired_at),
  cancellingAtMs: ms(row.cancelling_at),
  cancelledAtMs: ms(row.cancelled_at),
  traceParent: row.trace_parent,
});

const SHARD_INSERT_CHUNK = 200;

/** Statuses of a batch whose creating request may still be validating its input. */
const VALIDATION_STATUSES: BatchStatus[] = ['validating', 'cancelling'];

/** No shards planned and no heartbeat since `staleBeforeMs` (older rows: created before it). */
const validationStale = (eb: ExpressionBuilder<Tables, 'batches'>, staleBeforeMs: number) =>
  eb.and([
    eb('shards_total', '=', 0),
    eb(eb.fn.coalesce('validation_heartbeat_at', 'created_at'), '<', staleBeforeMs),
  ]);

/** Batch records and their status transitions; every transition is a conditional UPDATE. */
export class BatchesRepository implements BatchStore, BatchRunStore {
  constructor(private readonly database: Database) {}

  async insert(batch: BatchRecord): Promise<void> {
    await this.database.db
      .insertInto('batches')
      .values({
        id: batch.id,
        project_id: batch.projectId,
        created_by_key_id: batch.createdByKeyId,
        payer_kind: batch.payer.kind,
        payer_id: batch.payer.id,
        endpoint: batch.endpoint,
        model: batch.model,
        output_expires_after: batch.outputExpiresAfterSeconds,
        input_file_id: batch.inputFileId,
        input_blob_key: batch.inputBlobKey,
        completion_window: batch.completionWindow,
        status: batch.status,
        metadata: JSON.stringify(batch.metadata),
        errors: batch.errors === null ? null : JSON.stringify(batch.errors),
        total_lines: batch.requestCounts.total,
        completed_lines: batch.requestCounts.completed,
        failed_lines: batch.requestCounts.failed,
        shards_total: 0,
        output_file_id: batch.outputFileId,
        error_file_id: batch.errorFileId,
        created_at: batch.createdAtMs,
        expires_at: batch.expiresAtMs,
        in_progress_at: batch.inProgressAtMs,
        finalizing_at: batch.finalizingAtMs,
        completed_at: batch.completedAtMs,
        failed_at: batch.failedAtMs,
        expired_at: batch.expiredAtMs,
        cancelling_at: batch.cancellingAtMs,
        cancelled_at: batch.cancelledAtMs,
        lease_owner: null,
        lease_expires_at: null,
        validation_heartbeat_at: batch.createdAtMs,
        trace_parent: batch.traceParent,
      })
      .execute();
  }

  async find(id: string): Promise<BatchRecord | undefined> {
    const row = await this.database.db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toBatch(row) : undefined;
  }

  async findForProject(projectId: string, id: string): Promise<BatchRecord | undefined> {
    const row = await this.database.db
      .selectFrom('batches')
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return row ? toBatch(row) : undefined;
  }

  /** Newest first; `after` is the id of the last batch of the previous page. */
  async listByProject(projectId: string, limit: number, after?: string): Promise<Page<BatchRecord>> {
    let q = this.database.db.selectFrom('batches').selectAll().where('project_id', '=', projectId);
    if (after) q = q.where('id', '<', after);
    const rows = await q.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toBatch), hasMore: rows.length > limit };
  }

  async setInputBlob(id: string, blobKey: string): Promise<void> {
    await this.database.db.updateTable('batches').set({ input_blob_key: blobKey }).where('id', '=', id).execute();
  }

  /**
   * Stores the shard plan and the line total in one transaction: the runner sees all
   * shards or none. False (nothing stored) when the batch is no longer being validated
   * (the sweep ended it as interrupted).
   */
  async markValidated(id: string, totalLines: number, shards: readonly ShardPlan[], model: string | null = null): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('batches')
        .set({ total_lines: totalLines, model, shards_total: shards.length })
        .where('id', '=', id)
        .where('status', 'in', VALIDATION_STATUSES)
        .where('shards_total', '=', 0)
        .returning('id')
        .executeTakeFirst();
      if (!updated) return false;
      for (let i = 0; i < shards.length; i += SHARD_INSERT_CHUNK) {
        const rows = shards.slice(i, i + SHARD_INSERT_CHUNK).map((s) => ({
          id: `${id}:${s.shardNo}`,
          batch_id: id,
          shard_no: s.shardNo,
          first_line: s.firstLine,
          last_line: s.lastLine,
          start_byte: s.startByte,
          end_byte: s.endByte,
          line_count: s.lineCount,
          state: 'pending',
          lease_owner: null,
          lease_expires_at: null,
          claims: 0,
        }));
        await trx.insertInto('batch_shards').values(rows).execute();
      }
      return true;
    });
  }

  /** The creating request is still validating: refreshes the heartbeat. False once the batch was swept. */
  async heartbeatValidation(id: string, nowMs: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('batches')
      .set({ validation_heartbeat_at: nowMs })
      .where('id', '=', id)
      .where('status', 'in', VALIDATION_STATUSES)
      .where('shards_total', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Ends batches whose creating request died mid-validation (no shards, stale heartbeat):
   * `validating` → failed with `errors`, `cancelling` → cancelled. Each is one
   * conditional UPDATE, so sweeps running on several workers at once end a batch once,
   * and a request that finishes validating concurrently either wins (its shards are
   * planned, the sweep skips the batch) or loses (markValidated returns false).
   */
  async sweepInterruptedValidations(staleBeforeMs: number, nowMs: number, errors: readonly BatchError[]): Promise<SweptBatch[]> {
    const failed = await this.database.db
      .updateTable('batches')
      .set({ status: 'failed', failed_at: nowMs, errors: JSON.stringify(errors) })
      .where('status', '=', 'validating')
      .where((eb) => validationStale(eb, staleBeforeMs))
      .returning(['id', 'input_blob_key'])
      .execute();
    const cancelled = await this.database.db
      .updateTable('batches')
      .set({ status: 'cancelled', cancelled_at: nowMs })
      .where('status', '=', 'cancelling')
      .where((eb) => validationStale(eb, staleBeforeMs))
      .returning(['id', 'input_blob_key'])
      .execute();
    return [
      ...failed.map((r) => ({ id: r.id, status: 'failed' as const, inputBlobKey: r.input_blob_key })),
      ...cancelled.map((r) => ({ id: r.id, status: 'cancelled' as const, inputBlobKey: r.input_blob_key })),
    ];
  }

  /**
   * A creation that failed validation (also wins over a cancel requested meanwhile), or a
   * running batch whose input can no longer be read. Its line results and shards go in
   * the same transaction: a failed batch writes no files, and nothing runs for it again.
   */
  async markFailed(id: string, errors: readonly BatchError[], nowMs: number): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('batches')
        .set({ status: 'failed', failed_at: nowMs, errors: JSON.stringify(errors) })
        .where('id', '=', id)
        .where('status', 'in', ['validating', 'in_progress', 'cancelling'])
        .returning('id')
        .executeTakeFirst();
      if (updated) await dropLedger(trx, id);
    });
  }

  /** validating|in_progress → cancelling; cancelling_at is set once. False when not cancellable. */
  async requestCancel(projectId: string, id: string, nowMs: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('batches')
      .set({ status: 'cancelling', cancelling_at: nowMs })
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('status', 'in', [...CANCELLABLE_STATUSES])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The runner's first touch: validating → in_progress. */
  async markInProgress(id: string, nowMs: number): Promise<void> {
    await this.database.db
      .updateTable('batches')
      .set({ status: 'in_progress', in_progress_at: nowMs })
      .where('id', '=', id)
      .where('status', '=', 'validating')
      .execute();
  }

  async runInfo(id: string): Promise<BatchRunInfo | undefined> {
    const row = await this.database.db
      .selectFrom('batches')
      .select(['id', 'project_id', 'created_by_key_id', 'payer_kind', 'payer_id', 'endpoint', 'input_file_id', 'input_blob_key', 'status', 'expires_at', 'trace_parent'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row || row.input_blob_key === null) return undefined;
    return {
      id: row.id,
      projectId: row.project_id,
      createdByKeyId: row.created_by_key_id,
      payer: payerOfRow(row),
      endpoint: row.endpoint,
      inputFileId: row.input_file_id,
      inputBlobKey: row.input_blob_key,
      status: row.status as BatchStatus,
      expiresAtMs: Number(row.expires_at),
      traceParent: row.trace_parent,
    };
  }

  /** Status, window and creating key's state, read fresh before a line is dispatched. */
  async lineGate(id: string): Promise<LineGate | undefined> {
    const row = await this.database.db
      .selectFrom('batches as b')
      .leftJoin('api_keys as k', 'k.id', 'b.created_by_key_id')
      .select(['b.status', 'b.expires_at', 'b.created_by_key_id', 'k.id as key_id', 'k.revoked_at'])
      .select(['k.models', 'k.budget_limit_micros', 'k.budget_window', 'k.rpm', 'k.tpm', 'k.expires_at as key_expires_at', 'k.metadata', 'k.tags'])
      .where('b.id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    const keyRevoked = row.created_by_key_id !== null && (row.key_id === null || row.revoked_at !== null);
    const keyPolicy = row.key_id === null ? null : policyOf({ ...row, expires_at: row.key_expires_at });
    return { status: row.status as BatchStatus, expiresAtMs: Number(row.expires_at), keyRevoked, keyPolicy };
  }

  /** Whether a batch that has not ended still reads this blob. */
  async activeUsesBlob(blobKey: string): Promise<boolean> {
    const row = await this.database.db
      .selectFrom('batches')
      .select('id')
      .where('input_blob_key', '=', blobKey)
      .where('status', 'in', [...ACTIVE_STATUSES])
      .executeTakeFirst();
    return row !== undefined;
  }
}
