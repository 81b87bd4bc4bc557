/** FilesRepository on SQLite and PostgreSQL: scoping, soft delete, list order and cursors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { FilesRepository } from '../../../src/storage/db/repositories/files.repository.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import type { FileRecord } from '../../../src/domain/files/files.types.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
/** The time every read is made at: the records below expire a second later. */
const NOW = Date.now();

function fileRecord(projectId: string, overrides: Partial<FileRecord> = {}): FileRecord {
  const id = newId('file-');
  return {
    id,
    projectId,
    purpose: 'batch',
    filename: 'a.jsonl',
    bytes: 10,
    blobKey: `files/${id}.jsonl`,
    isError: false,
    status: 'processed',
    batchId: null,
    createdAtMs: NOW,
    expiresAtMs: NOW + 1000,
    deletedAtMs: null,
    ...overrides,
  };
}

describe.each(cases)('files repository on $name', ({ open }) => {
  let database: Database;
  let files: FilesRepository;
  let projectId: string;
  let otherProject: string;
  const ids: string[] = [];

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    const projects = new ProjectsRepository(database);
    projectId = (await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 0, createdAtMs: Date.now() })).id;
    otherProject = (await projects.insert({ id: newUuid(), name: 'q', balanceMicros: 0, createdAtMs: Date.now() })).id;
    files = new FilesRepository(database);
    for (let i = 0; i < 4; i++) {
      const record = fileRecord(projectId, i === 3 ? { purpose: 'batch_output', isError: true, batchId: 'batch_x' } : {});
      await files.insert(record);
      ids.push(record.id);
    }
  });
  afterAll(() => database.close());

  it('round-trips a record, booleans and nulls included', async () => {
    const found = await files.findLive(projectId, ids[3]!, NOW);
    expect(found).toMatchObject({ id: ids[3], purpose: 'batch_output', isError: true, batchId: 'batch_x', deletedAtMs: null });
    expect(typeof found!.bytes).toBe('number');
  });

  it('scopes every read to the project', async () => {
    expect(await files.findLive(otherProject, ids[0]!, NOW)).toBeUndefined();
    expect((await files.list(otherProject, { order: 'desc', limit: 10 }, NOW)).items).toEqual([]);
    expect(await files.softDelete(otherProject, ids[0]!, Date.now())).toBe(false);
  });

  it('lists by id in both orders, with purpose filter, cursor and has_more', async () => {
    const desc = await files.list(projectId, { order: 'desc', limit: 10 }, NOW);
    expect(desc.items.map((f) => f.id)).toEqual([...ids].reverse());
    const asc = await files.list(projectId, { order: 'asc', limit: 2 }, NOW);
    expect(asc).toMatchObject({ hasMore: true });
    expect(asc.items.map((f) => f.id)).toEqual(ids.slice(0, 2));
    const next = await files.list(projectId, { order: 'asc', limit: 2, after: ids[1] }, NOW);
    expect(next.items.map((f) => f.id)).toEqual(ids.slice(2));
    expect(next.hasMore).toBe(false);
    const outputs = await files.list(projectId, { order: 'desc', limit: 10, purpose: 'batch_output' }, NOW);
    expect(outputs.items.map((f) => f.id)).toEqual([ids[3]]);
  });

  it('soft delete hides the record once and frees its blob for collection', async () => {
    const record = fileRecord(projectId);
    await files.insert(record);
    expect(await files.blobHasLiveRecord(record.blobKey, NOW)).toBe(true);
    expect(await files.softDelete(projectId, record.id, Date.now())).toBe(true);
    expect(await files.softDelete(projectId, record.id, Date.now())).toBe(false);
    expect(await files.findLive(projectId, record.id, NOW)).toBeUndefined();
    expect((await files.list(projectId, { order: 'desc', limit: 100 }, NOW)).items.map((f) => f.id)).not.toContain(record.id);
    expect(await files.blobHasLiveRecord(record.blobKey, NOW)).toBe(false);
  });
});
