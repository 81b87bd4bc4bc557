/**
 * Migration 0026 and the request log's write path on SQLite and PostgreSQL: the model
 * index is gone and the session index holds only calls with a session; a batch written by
 * the repository (on PostgreSQL one JSON parameter expanded into the table's rows) reads
 * back exactly, bodies included, an id already written is skipped, a caller's NUL does not
 * fail the batch on PostgreSQL (it is stored as U+FFFD), and the session and
 * model filters still find their calls; the migration reverts to the indexes before.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { RequestLogRepository } from '../../../src/storage/db/repositories/request-log.repository.js';
import type { Database } from '../../../src/storage/db/database.js';
import type { RequestLogEntry } from '../../../src/domain/request-log/request-log.types.js';
import type { StoredBody } from '../../../src/domain/request-log/request-log.port.js';

const cases = await dialectCases();
const NOW = 1_800_000_000_000;

/** The request log's indexes by name, each with whether it is partial. */
async function indexes(database: Database): Promise<Record<string, boolean>> {
  if (database.flavor === 'postgres') {
    const { rows } = await sql<{ name: string; def: string }>`select indexname as name, indexdef as def from pg_indexes where schemaname = current_schema() and tablename = 'request_log'`.execute(database.db);
    return Object.fromEntries(rows.map((r) => [r.name, / WHERE /i.test(r.def)]));
  }
  const { rows } = await sql<{ name: string; def: string | null }>`select name, sql as def from sqlite_master where type = 'index' and tbl_name = 'request_log'`.execute(database.db);
  return Object.fromEntries(rows.map((r) => [r.name, / where /i.test(r.def ?? '')]));
}

const entry = (n: number, over: Partial<RequestLogEntry> = {}): RequestLogEntry => ({
  id: `req_${n}`,
  projectId: 'proj_a',
  keyId: 'key_a',
  createdAtMs: NOW + n,
  route: '/v1/chat/completions',
  wire: 'chat-completions',
  scope: 'v1',
  modelRequested: 'fast',
  model: 'model-a',
  provider: 'openai',
  deployment: 'dep-1',
  status: 200,
  errorCode: null,
  stream: false,
  sessionId: null,
  endUser: null,
  tags: [],
  batchId: null,
  inputTokens: 10,
  outputTokens: 20,
  cachedInputTokens: 0,
  costMicros: 30,
  creditWaitMs: null,
  firstByteMs: null,
  engineMs: 5,
  totalMs: 7,
  attempts: [{ deployment: 'dep-1', provider: 'openai', status: 200, errorCode: null, startedMs: NOW + n, durationMs: 5 }],
  fallback: false,
  toolsCalled: [],
  holdMicros: 100,
  settledMicros: 30,
  bodyLogged: false,
  ...over,
});

const unusual = entry(2, {
  keyId: null,
  modelRequested: 'claude "quoted" \\ name',
  model: 'model-b',
  status: 502,
  errorCode: 'upstream_error',
  stream: true,
  sessionId: 'sess_1',
  endUser: 'ünïcode 🐟',
  tags: ['team-a', 'with "quote"'],
  batchId: 'batch_1',
  inputTokens: 9_007_199_254_740,
  cachedInputTokens: 4,
  creditWaitMs: 3,
  firstByteMs: 2,
  attempts: [
    { deployment: 'dep-1', provider: 'openai', status: 503, errorCode: 'overloaded', startedMs: NOW, durationMs: 1 },
    { deployment: 'dep-2', provider: null, status: null, errorCode: null, startedMs: NOW + 1, durationMs: 0 },
  ],
  fallback: true,
  toolsCalled: ['shell', 'apply_patch'],
  holdMicros: null,
  settledMicros: null,
  bodyLogged: true,
});
const body: StoredBody = { mode: 'full', request: '{"messages":[{"role":"user","content":"hi\\n\'there\'"}]}', response: '{"ok":true}', truncated: true, blobKey: null };

describe.each(cases)('migration 0026 and the request log write path on $name', ({ open }) => {
  it('drops the model index, keeps sessions only in a partial index, writes and reads a batch exactly, and reverts', async () => {
    const database = await open();
    try {
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0025-people-mapped-grants')).error).toBeUndefined();
      const before = await indexes(database);
      expect(before).toMatchObject({ request_log_model_idx: false, request_log_session_idx: false });

      await migrateToLatest(database);
      const after = await indexes(database);
      expect(Object.keys(after)).not.toContain('request_log_model_idx');
      expect(after).toMatchObject({ request_log_session_idx: true, request_log_project_idx: false, request_log_key_idx: false, request_log_created_idx: false });

      const log = new RequestLogRepository(database);
      await log.writeMany([
        { entry: entry(1), body: null },
        { entry: unusual, body },
      ]);
      // Written again (a flush retried): skipped, not doubled and not failed.
      await log.writeMany([{ entry: { ...entry(1), status: 500 }, body: null }, { entry: unusual, body: { ...body, request: 'other' } }]);
      expect(await log.get('req_1', 'proj_a')).toEqual(entry(1));
      expect(await log.get('req_2', 'proj_a')).toEqual(unusual);
      expect(await log.body('req_2', 'proj_a')).toEqual(body);
      expect(await log.body('req_1', 'proj_a')).toBeNull();

      // A caller's NUL (PostgreSQL text cannot hold it) does not fail the batch: on PostgreSQL it
      // becomes U+FFFD; a body's escaped \u0000 (JSON text) is kept as it was.
      const nulBody: StoredBody = { mode: 'full', request: '{"content":"a\\u0000b \\\\u0000"}', response: '{}', truncated: false, blobKey: null };
      await log.writeMany([
        { entry: entry(3, { endUser: 'ana\u0000bel', sessionId: 'sess\u0000' }), body: nulBody },
        { entry: entry(4), body: null },
      ]);
      const replaced = database.flavor === 'postgres' ? '\ufffd' : '\u0000';
      expect(await log.get('req_3', 'proj_a')).toEqual(entry(3, { endUser: `ana${replaced}bel`, sessionId: `sess${replaced}` }));
      expect(await log.get('req_4', 'proj_a')).toEqual(entry(4));
      expect(await log.body('req_3', 'proj_a')).toEqual(nulBody);
      await database.db.deleteFrom('request_log_bodies').where('id', 'in', ['req_3']).execute();
      await database.db.deleteFrom('request_log').where('id', 'in', ['req_3', 'req_4']).execute();

      const ids = async (filter: Record<string, unknown>) => (await log.list({ projectId: 'proj_a', ...filter }, 10, null))!.items.map((e) => e.id);
      expect(await ids({})).toEqual(['req_2', 'req_1']);
      expect(await ids({ sessionId: 'sess_1' })).toEqual(['req_2']);
      expect(await ids({ model: 'model-b' })).toEqual(['req_2']);
      expect(await ids({ model: 'fast' })).toEqual(['req_1']);
      expect((await log.session('sess_1', 'proj_a', 10))!.entries.map((e) => e.id)).toEqual(['req_2']);

      expect((await migrator.migrateTo('0025-people-mapped-grants')).error).toBeUndefined();
      expect(await indexes(database)).toEqual(before);
    } finally {
      await database.close();
    }
  });
});
