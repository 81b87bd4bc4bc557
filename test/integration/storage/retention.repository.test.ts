/**
 * Durability and retention in the repositories, on SQLite and PostgreSQL: the validation
 * sweep (conditional, once under concurrent sweeps, racing markValidated), file expiry
 * and the janitor's view of retired blobs, and the line-result ledger dropped when a
 * batch ends, with late writes for an ended batch neither recorded nor billed.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import { BatchesRepository } from '../../../src/storage/db/repositories/batches.repository.js';
import { BatchShardsRepository } from '../../../src/storage/db/repositories/batch-shards.repository.js';
import { BatchLineResultsRepository } from '../../../src/storage/db/repositories/batch-line-results.repository.js';
import { BatchFinalizationRepository } from '../../../src/storage/db/repositories/batch-finalization.repository.js';
import { FilesRepository } from '../../../src/storage/db/repositories/files.repository.js';
import { VALIDATION_INTERRUPTED } from '../../../src/domain/batches/batch-input.js';
import { NO_USAGE, type BatchRecord, type LineResult, type ShardPlan } from '../../../src/domain/batches/batch.types.js';
import type { FileRecord } from '../../../src/domain/files/files.types.js';
import { outputFileRecord } from '../../../src/domain/files/files.service.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const NOW = Date.now();
/** Long before NOW: rows created then are the only ones a sweep at NOW can find stale. */
const T0 = 1_000_000;

function batchRecord(projectId: string, overrides: Partial<BatchRecord> = {}): BatchRecord {
  return {
    id: newId('batch_'), projectId, payer: { kind: 'project', id: projectId }, createdByKeyId: null, endpoint: '/v1/chat/completions', model: null, outputExpiresAfterSeconds: null, inputFileId: 'file-x',
    inputBlobKey: null, completionWindow: '24h', status: 'validating', metadata: {}, errors: null,
    requestCounts: { total: 0, completed: 0, failed: 0 }, usage: NO_USAGE, outputFileId: null, errorFileId: null, createdAtMs: NOW,
    expiresAtMs: NOW + 86_400_000, inProgressAtMs: null, finalizingAtMs: null, completedAtMs: null, failedAtMs: null,
    expiredAtMs: null, cancellingAtMs: null, cancelledAtMs: null, traceParent: null, ...overrides,
  };
}

function fileRecord(projectId: string, overrides: Partial<FileRecord> = {}): FileRecord {
  const id = newId('file-');
  return {
    id, projectId, purpose: 'batch', filename: 'a.jsonl', bytes: 10, blobKey: `files/${id}.jsonl`, isError: false,
    status: 'processed', batchId: null, createdAtMs: NOW, expiresAtMs: NOW + 1000, deletedAtMs: null, ...overrides,
  };
}

const plan = (lines: number): ShardPlan[] => [{ shardNo: 0, firstLine: 1, lastLine: lines, startByte: 0, endByte: 100, lineCount: lines }];
const result = (batchId: string, lineNo: number): LineResult => ({ batchId, lineNo, ok: true, errorCode: null, lineJson: `{"n":${lineNo}}`, usage: NO_USAGE });

describe.each(cases)('retention in the repositories on $name', ({ open }) => {
  let database: Database;
  let projects: ProjectsRepository;
  let usage: UsageRepository;
  let batches: BatchesRepository;
  let shards: BatchShardsRepository;
  let results: BatchLineResultsRepository;
  let finalization: BatchFinalizationRepository;
  let files: FilesRepository;
  let projectId: string;

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    projects = new ProjectsRepository(database);
    usage = new UsageRepository(database);
    batches = new BatchesRepository(database);
    shards = new BatchShardsRepository(database);
    results = new BatchLineResultsRepository(database, usage);
    finalization = new BatchFinalizationRepository(database);
    files = new FilesRepository(database);
    projectId = (await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: NOW })).id;
  });
  afterAll(() => database.close());

  const usageRecord = (requestId: string): UsageRecord => ({
    id: newId('usage_'), projectId, payer: { kind: 'project', id: projectId }, keyId: null, model: 'm', route: 'batch', inputTokens: 1, outputTokens: 1, costMicros: 5,
    requestId, status: 200, createdAtMs: NOW,
  });
  const ledgerOf = async (batchId: string) => ({
    results: (await database.db.selectFrom('batch_line_results').select('line_no').where('batch_id', '=', batchId).execute()).length,
    shards: (await shards.claimsOf(batchId)).length,
  });

  it('the validation sweep ends stale validations once, even when sweeps race', async () => {
    const stale = batchRecord(projectId, { createdAtMs: T0 });
    const beating = batchRecord(projectId, { createdAtMs: T0 });
    const planned = batchRecord(projectId, { createdAtMs: T0 });
    const cancelled = batchRecord(projectId, { createdAtMs: T0, inputBlobKey: 'files/c.jsonl' });
    const legacy = batchRecord(projectId, { createdAtMs: T0 });
    for (const b of [stale, beating, planned, cancelled, legacy]) await batches.insert(b);
    expect(await batches.heartbeatValidation(beating.id, T0 + 500_000)).toBe(true);
    expect(await batches.markValidated(planned.id, 2, plan(2))).toBe(true);
    expect(await batches.requestCancel(projectId, cancelled.id, T0 + 1)).toBe(true);
    // A row from before migration 0003 has no heartbeat: its creation time stands in.
    await database.db.updateTable('batches').set({ validation_heartbeat_at: null }).where('id', '=', legacy.id).execute();

    const sweep = () => batches.sweepInterruptedValidations(T0 + 100_000, NOW, [VALIDATION_INTERRUPTED]);
    const [a, b] = await Promise.all([sweep(), sweep()]);
    const swept = [...a, ...b];
    expect(swept.map((s) => s.id).sort()).toEqual([stale.id, cancelled.id, legacy.id].sort());
    expect(swept.find((s) => s.id === cancelled.id)).toEqual({ id: cancelled.id, status: 'cancelled', inputBlobKey: 'files/c.jsonl' });

    expect(await batches.find(stale.id)).toMatchObject({ status: 'failed', failedAtMs: NOW, errors: [VALIDATION_INTERRUPTED] });
    expect(await batches.find(legacy.id)).toMatchObject({ status: 'failed', failedAtMs: NOW });
    expect(await batches.find(cancelled.id)).toMatchObject({ status: 'cancelled', cancelledAtMs: NOW, cancellingAtMs: T0 + 1, errors: null });
    expect((await batches.find(beating.id))!.status).toBe('validating');
    expect((await batches.find(planned.id))!.status).toBe('validating');
    expect(await sweep()).toEqual([]);
  });

  it('a request whose batch was swept can neither heartbeat nor plan shards', async () => {
    const batch = batchRecord(projectId, { createdAtMs: T0 });
    await batches.insert(batch);
    await batches.sweepInterruptedValidations(T0 + 1, NOW, [VALIDATION_INTERRUPTED]);
    expect(await batches.heartbeatValidation(batch.id, NOW)).toBe(false);
    expect(await batches.markValidated(batch.id, 2, plan(2))).toBe(false);
    expect(await ledgerOf(batch.id)).toEqual({ results: 0, shards: 0 });
    expect((await batches.find(batch.id))!.requestCounts.total).toBe(0);
  });

  it('finish drops the ended batch\'s line results and shards with its files registered', async () => {
    const batch = batchRecord(projectId);
    const other = batchRecord(projectId);
    for (const b of [batch, other]) {
      await batches.insert(b);
      await batches.markValidated(b.id, 2, plan(2));
      await results.insertMany([{ result: result(b.id, 1), usage: [] }, { result: result(b.id, 2), usage: [] }], NOW);
      await shards.markDone(`${b.id}:0`);
    }
    expect(await finalization.claim(batch.id, 'f', NOW, 60_000)).toBeUndefined(); // still validating: not finishable
    await batches.markInProgress(batch.id, NOW);
    expect(await finalization.claim(batch.id, 'f', NOW, 60_000)).toBe('in_progress');
    const file = outputFileRecord({ id: newId('file-'), projectId, batchId: batch.id, filename: 'o.jsonl', blobKey: `batches/${batch.id}/output.jsonl`, bytes: 3, isError: false, createdAtMs: NOW });
    const patch = { status: 'completed' as const, atMs: NOW, counts: { total: 2, completed: 2, failed: 0 }, outputFileId: file.id, errorFileId: null };
    expect(await finalization.finish(batch.id, 'f', 'in_progress', patch, [file])).toBe(true);
    expect(await ledgerOf(batch.id)).toEqual({ results: 0, shards: 0 });
    expect(await ledgerOf(other.id)).toEqual({ results: 2, shards: 1 });
    expect(await files.findLive(projectId, file.id, NOW)).toMatchObject({ id: file.id, batchId: batch.id });
    expect(await batches.find(batch.id)).toMatchObject({ status: 'completed', requestCounts: { total: 2, completed: 2, failed: 0 } });
  });

  it('markFailed drops the ledger of a running batch', async () => {
    const batch = batchRecord(projectId);
    await batches.insert(batch);
    await batches.markValidated(batch.id, 2, plan(2));
    await results.insertMany([{ result: result(batch.id, 1), usage: [] }], NOW);
    await batches.markFailed(batch.id, [{ code: 'file_object_missing', message: 'gone', line: null, param: null }], NOW);
    expect(await ledgerOf(batch.id)).toEqual({ results: 0, shards: 0 });
  });

  it('a late write for an ended batch is neither recorded nor billed; other batches in the flush are', async () => {
    const ended = batchRecord(projectId);
    const running = batchRecord(projectId);
    for (const b of [ended, running]) {
      await batches.insert(b);
      await batches.markValidated(b.id, 2, plan(2));
    }
    await batches.markFailed(ended.id, [], NOW);
    const before = (await projects.balanceOf(projectId))!;
    const inserted = await results.insertMany(
      [
        { result: result(ended.id, 1), usage: [usageRecord('req_late_ended')] },
        { result: result(running.id, 1), usage: [usageRecord('req_late_running')] },
      ],
      NOW,
    );
    expect(inserted).toEqual(new Set([1]));
    expect(await ledgerOf(ended.id)).toEqual({ results: 0, shards: 0 });
    expect((await ledgerOf(running.id)).results).toBe(1);
    expect((await projects.balanceOf(projectId))!).toBe(before - 5);
    const billed = (await usage.listByProject(projectId, 1000)).items.map((u) => u.requestId);
    expect(billed).toContain('req_late_running');
    expect(billed).not.toContain('req_late_ended');
    expect(await results.insert(result(ended.id, 2), [usageRecord('req_late_2')], NOW)).toBe(false);
  });

  it('an expired file is not live: hidden from find and list, and no longer keeps its blob', async () => {
    const expiring = fileRecord(projectId, { expiresAtMs: NOW + 10 });
    const forever = fileRecord(projectId, { expiresAtMs: null });
    for (const f of [expiring, forever]) await files.insert(f);
    expect(await files.findLive(projectId, expiring.id, NOW + 9)).toBeDefined();
    expect(await files.findLive(projectId, expiring.id, NOW + 10)).toBeUndefined();
    expect(await files.findLive(projectId, forever.id, NOW + 10 ** 12)).toBeDefined();
    const listed = async (at: number) => (await files.list(projectId, { order: 'asc', limit: 10_000 }, at)).items.map((f) => f.id);
    expect(await listed(NOW + 9)).toContain(expiring.id);
    expect(await listed(NOW + 10)).not.toContain(expiring.id);
    expect(await files.blobHasLiveRecord(expiring.blobKey, NOW + 9)).toBe(true);
    expect(await files.blobHasLiveRecord(expiring.blobKey, NOW + 10)).toBe(false);
  });

  it('retired records: deleted or expired, unpurged, and not read by an unfinished batch', async () => {
    const at = NOW + 5_000;
    const live = fileRecord(projectId, { expiresAtMs: at + 1 });
    const expired = fileRecord(projectId, { expiresAtMs: at });
    const deleted = fileRecord(projectId, { expiresAtMs: at + 1 });
    const inUse = fileRecord(projectId, { expiresAtMs: at });
    const endedReader = fileRecord(projectId, { expiresAtMs: at });
    for (const f of [live, expired, deleted, inUse, endedReader]) await files.insert(f);
    await files.softDelete(projectId, deleted.id, NOW);
    await batches.insert(batchRecord(projectId, { inputFileId: inUse.id, inputBlobKey: inUse.blobKey, status: 'in_progress' }));
    await batches.insert(batchRecord(projectId, { inputFileId: endedReader.id, inputBlobKey: endedReader.blobKey, status: 'completed' }));
    const mine = new Set([live, expired, deleted, inUse, endedReader].map((f) => f.id));
    const retired = async () => (await files.retiredUnpurged(at, 10_000)).filter((f) => mine.has(f.id)).map((f) => f.id).sort();
    expect(await retired()).toEqual([expired.id, deleted.id, endedReader.id].sort());
    expect((await files.retiredUnpurged(at, 10_000)).find((f) => f.id === expired.id)).toEqual({ id: expired.id, blobKey: expired.blobKey });

    await files.markBlobPurged(expired.blobKey, at);
    await files.markBlobPurged(live.blobKey, at); // a live record is never marked
    expect(await retired()).toEqual([deleted.id, endedReader.id].sort());
    const purgedAt = async (id: string) =>
      (await database.db.selectFrom('files').select('purged_at').where('id', '=', id).executeTakeFirstOrThrow()).purged_at;
    expect(await purgedAt(expired.id)).toBe(at);
    expect(await purgedAt(live.id)).toBeNull();
  });
});

describe.each(cases)('migration 0003 on $name', ({ open }) => {
  it('drops the ledgers of batches that had already ended, and keeps those of running ones', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0002-files-batches')).error).toBeUndefined();
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 0, created_at: NOW }).execute();
      const ids = { ended: newId('batch_'), running: newId('batch_') };
      for (const [id, status] of [[ids.ended, 'completed'], [ids.running, 'in_progress']] as const) {
        await database.db
          .insertInto('batches')
          .values({
            id, project_id: projectId, created_by_key_id: null, endpoint: '/v1/chat/completions', input_file_id: 'file-x',
            input_blob_key: null, completion_window: '24h', status, metadata: '{}', errors: null, total_lines: 1,
            completed_lines: 0, failed_lines: 0, shards_total: 1, output_file_id: null, error_file_id: null, created_at: NOW,
            expires_at: NOW + 1, in_progress_at: null, finalizing_at: null, completed_at: null, failed_at: null,
            expired_at: null, cancelling_at: null, cancelled_at: null, lease_owner: null, lease_expires_at: null,
          })
          .execute();
        await database.db
          .insertInto('batch_shards')
          .values({ id: `${id}:0`, batch_id: id, shard_no: 0, first_line: 1, last_line: 1, start_byte: 0, end_byte: 10, line_count: 1, state: 'done', lease_owner: null, lease_expires_at: null, claims: 1 })
          .execute();
        await database.db
          .insertInto('batch_line_results')
          .values({ batch_id: id, line_no: 1, ok: 1, error_code: null, line_json: '{}', created_at: NOW })
          .execute();
      }
      await migrateToLatest(database);
      const count = async (table: 'batch_shards' | 'batch_line_results', id: string) =>
        (await database.db.selectFrom(table).select('batch_id').where('batch_id', '=', id).execute()).length;
      expect([await count('batch_shards', ids.ended), await count('batch_line_results', ids.ended)]).toEqual([0, 0]);
      expect([await count('batch_shards', ids.running), await count('batch_line_results', ids.running)]).toEqual([1, 1]);
    } finally {
      await database.close();
    }
  });
});

describe.each(cases)('migration 0005 on $name', ({ open }) => {
  it('adds batches.trace_parent (null on existing rows) and removes it on the way down', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0004-usage-clustered')).error).toBeUndefined();
      const projectId = newUuid();
      await database.db.insertInto('projects').values({ id: projectId, name: 'p', balance_micros: 0, created_at: NOW }).execute();
      const id = newId('batch_');
      await database.db
        .insertInto('batches')
        .values({
          id, project_id: projectId, created_by_key_id: null, endpoint: '/v1/chat/completions', input_file_id: 'file-x',
          input_blob_key: 'files/x.jsonl', completion_window: '24h', status: 'in_progress', metadata: '{}', errors: null, total_lines: 1,
          completed_lines: 0, failed_lines: 0, shards_total: 1, output_file_id: null, error_file_id: null, created_at: NOW,
          expires_at: NOW + 1, in_progress_at: null, finalizing_at: null, completed_at: null, failed_at: null,
          expired_at: null, cancelling_at: null, cancelled_at: null, lease_owner: null, lease_expires_at: null,
        })
        .execute();
      await migrateToLatest(database);
      const row = await database.db.selectFrom('batches').select(['id', 'trace_parent']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(row).toEqual({ id, trace_parent: null });

      expect((await migrator.migrateTo('0004-usage-clustered')).error).toBeUndefined();
      // Asked of this database's own batches table (introspection would list every schema's on a shared server).
      await expect(sql`select trace_parent from batches`.execute(database.db)).rejects.toThrow(/trace_parent/);
      await sql`select validation_heartbeat_at from batches`.execute(database.db);
    } finally {
      await database.close();
    }
  });
});
