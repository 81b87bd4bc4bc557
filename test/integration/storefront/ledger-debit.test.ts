/**
 * The storefront's draws as the usage transaction writes them (StorefrontLedgerDebit), on
 * SQLite and PostgreSQL: the calls of several holders committed together draw one movement
 * each, clamped in order as if drawn one after another, and each account loses exactly
 * what its movements took.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { StorefrontRepository } from '../../../src/storage/db/repositories/storefront.repository.js';
import { StorefrontLedgerDebit } from '../../../src/storage/db/repositories/storefront-debit.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import type { CreditHolder } from '../../../src/domain/storefront/storefront.types.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const NOW = 1_760_000_000_000;
const TENANT = newUuid();

const idOf = (holder: CreditHolder) => (holder.kind === 'agent' ? holder.agentId : holder.receiptId);

function record(holder: CreditHolder, costMicros: number, n: number): UsageRecord {
  return {
    id: newId('usage_'), projectId: TENANT, keyId: null, payer: { kind: holder.kind, id: idOf(holder) }, model: 'm', route: '/v1/chat/completions',
    inputTokens: 1, outputTokens: 1, costMicros, requestId: `req_${n}`, status: 200, createdAtMs: NOW + n,
  };
}

describe.each(cases)('storefront draws in the usage transaction on $name', ({ open }) => {
  let database: Database;
  let store: StorefrontRepository;
  let usage: UsageRepository;
  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    await new ProjectsRepository(database).insert({ id: TENANT, name: 'storefront', balanceMicros: 0, createdAtMs: NOW });
    store = new StorefrontRepository(database);
    const debit = new StorefrontLedgerDebit(database, new Map([[TENANT, 'sluice']]));
    usage = new UsageRepository(database, new Map([['agent', debit], ['receipt', debit]]));
  });
  afterAll(async () => database?.close());

  const credited = async (holder: CreditHolder, micros: number) => {
    await store.purchase({ id: newId('mov_'), sellerId: 'sluice', holder, kind: 'purchase', amountMicros: micros, paymentRef: `test:${idOf(holder)}`, rail: 'x402', detail: null, createdAtMs: NOW });
  };

  it('one movement per call for several holders in one transaction, clamped in order, the accounts debited by their sum', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    const receipt: CreditHolder = { kind: 'receipt', receiptId: newId('rcpt_') };
    await credited(agent, 1_000);
    await credited(receipt, 100);
    const records = [record(agent, 300, 1), record(receipt, 60, 2), record(agent, 0, 3), record(receipt, 60, 4), record(agent, 400, 5), record(receipt, 60, 6)];
    await usage.recordAndDebitMany(records);

    const draws = async (holder: CreditHolder) =>
      (await store.movements('sluice', holder)).filter((m) => m.kind === 'draw').map((m) => [m.id, m.amountMicros, m.detail, m.createdAtMs]);
    const row = (r: UsageRecord, amount: number) => [`mov_${r.id}`, amount, `m ${r.requestId}`, r.createdAtMs];
    expect((await draws(agent)).sort()).toEqual([row(records[0]!, -300), row(records[2]!, 0), row(records[4]!, -400)].sort());
    // 100 µ$ pays for the first 60 in full, 40 of the second, nothing of the third.
    expect((await draws(receipt)).sort()).toEqual([row(records[1]!, -60), row(records[3]!, -40), row(records[5]!, 0)].sort());
    expect(await store.account('sluice', agent)).toMatchObject({ balanceMicros: 300, consumedMicros: 700, updatedAtMs: NOW + 5 });
    expect(await store.account('sluice', receipt)).toMatchObject({ balanceMicros: 0, consumedMicros: 100, updatedAtMs: NOW + 6 });
    expect(await store.rebuildBalances()).toBe(0);
  });

  it('transactions of different sizes reuse their statements and still draw from the balance left', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    await credited(agent, 10_000);
    for (const size of [1, 3, 1, 40, 3]) {
      await usage.recordAndDebitMany(Array.from({ length: size }, (_, i) => record(agent, 100, i)));
    }
    const draws = (await store.movements('sluice', agent)).filter((m) => m.kind === 'draw');
    expect(draws).toHaveLength(48);
    expect(draws.every((m) => m.amountMicros === -100)).toBe(true);
    expect(await store.account('sluice', agent)).toMatchObject({ balanceMicros: 5_200, consumedMicros: 4_800 });
  });

  it('a replayed record draws nothing: its transaction fails whole', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    await credited(agent, 1_000);
    const first = record(agent, 100, 1);
    await usage.recordAndDebitMany([first]);
    await expect(usage.recordAndDebitMany([record(agent, 100, 2), first])).rejects.toThrow();
    expect((await store.movements('sluice', agent)).filter((m) => m.kind === 'draw')).toHaveLength(1);
    expect(await store.account('sluice', agent)).toMatchObject({ balanceMicros: 900, consumedMicros: 100 });
  });
});
