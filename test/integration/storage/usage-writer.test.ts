/**
 * When a usage record is committed, on a real database: on the embedded SQLite the first
 * record of an event-loop turn is committed before write() returns (its reply waits for
 * nothing else), and the turn's later records share one transaction at the turn's end; a
 * record with outbox messages always waits for that transaction. On PostgreSQL, which
 * cannot commit without waiting, a turn's records share one transaction.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pgliteDatabase, tempDir } from '../../helpers/databases.js';
import { openDatabase, type Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { BillingService } from '../../../src/domain/billing/billing.service.js';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
import { newUuid } from '../../../src/domain/shared/ids.js';

const T0 = 1_800_000_000_000;

async function setup(database: Database) {
  await migrateToLatest(database);
  const projects = new ProjectsRepository(database);
  const project = await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000_000, createdAtMs: T0 });
  // 1 µ$ per input token, 2 per output token.
  const billing = new BillingService(projects, new UsageRepository(database), () => ({ inputPerMillionUsd: 1, outputPerMillionUsd: 2 }), { nowMs: () => T0 });
  const principal = apiKeyPrincipal(project.id, null);
  const record = (requestId: string) =>
    billing.usageRecord(principal, { model: 'm', route: '/v1/chat/completions', requestId, inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 10, outputTokens: 5, status: 200 });
  const recorded = async () =>
    (await database.db.selectFrom('usage_records').select('request_id').where('project_id', '=', project.id).orderBy('request_id').execute()).map((r) => r.request_id);
  const balance = async () => (await projects.balancesOf([project.id])).get(project.id);
  return { billing, record, recorded, balance };
}

let database: Database | null = null;
afterEach(async () => {
  await database?.close();
  database = null;
});

describe('usage commits on SQLite', () => {
  const open = () => (database = openDatabase({ kind: 'sqlite', path: path.join(tempDir('sluice-usage-writer-'), 'sluice.db') }));

  it('the first record of a turn is committed before write() returns; the turn’s later ones share one transaction', async () => {
    const { billing, record, recorded, balance } = await setup(open());
    const first = billing.write(record('req_1'));
    expect(billing.commits).toBe(1);
    expect(await recorded()).toEqual(['req_1']);
    const later = [billing.write(record('req_2')), billing.write(record('req_3'))];
    expect(billing.commits).toBe(1);
    await Promise.all([first, ...later]);
    expect(billing.commits).toBe(2);
    expect(await recorded()).toEqual(['req_1', 'req_2', 'req_3']);
    expect(await balance()).toBe(1_000_000 - 3 * 20);
    // A new turn: its first record is committed at once again.
    void billing.write(record('req_4'));
    expect(billing.commits).toBe(3);
  });

  it('a record with outbox messages waits for the turn’s transaction', async () => {
    const { billing, record, recorded } = await setup(open());
    const written = billing.write(record('req_msg'), { outbox: [{ targetKind: 'intermediary', idempotencyKey: 'settle:msg', payload: {} }] });
    expect(billing.commits).toBe(0);
    await written;
    expect(billing.commits).toBe(1);
    expect(await recorded()).toEqual(['req_msg']);
  });
});

describe('usage commits on PostgreSQL (PGlite)', () => {
  it('a turn’s records share one transaction, none committed before write() returns', async () => {
    database = await pgliteDatabase();
    const { billing, record, recorded, balance } = await setup(database);
    const writes = [billing.write(record('req_1')), billing.write(record('req_2'))];
    expect(billing.commits).toBe(0);
    await Promise.all(writes);
    expect(billing.commits).toBe(1);
    expect(await recorded()).toEqual(['req_1', 'req_2']);
    expect(await balance()).toBe(1_000_000 - 2 * 20);
  });
});
