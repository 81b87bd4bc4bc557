/** The storefront ledger on SQLite and PostgreSQL: purchases credit once, draws and reversals clamp, balances rebuild from the ledger. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest, migratorFor } from '../../../src/storage/db/migrate.js';
import { StorefrontRepository } from '../../../src/storage/db/repositories/storefront.repository.js';
import type { CreditHolder, CreditMovement } from '../../../src/domain/storefront/storefront.types.js';
import { newId } from '../../../src/domain/shared/ids.js';
import { receiptHash, newReceiptId } from '../../../src/domain/storefront/receipts.js';

const cases = await dialectCases();
const NOW = 1_760_000_000_000;

const movement = (holder: CreditHolder, kind: CreditMovement['kind'], amountMicros: number, paymentRef: string | null, sellerId = 'sluice'): CreditMovement => ({
  id: newId('mov_'), sellerId, holder, kind, amountMicros, paymentRef, rail: kind === 'purchase' ? 'x402' : null, detail: null, createdAtMs: NOW,
});

describe.each(cases)('storefront ledger on $name', ({ open }) => {
  let database: Database;
  let repo: StorefrontRepository;
  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    repo = new StorefrontRepository(database);
  });
  afterAll(async () => database?.close());

  it('a payment reference credits once; the second presentation is payment_consumed', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    const first = await repo.purchase(movement(agent, 'purchase', 5_000_000, `x402:ref-${agent.agentId}`));
    expect(first).toMatchObject({ credited: true, account: { balanceMicros: 5_000_000, purchasedMicros: 5_000_000, consumedMicros: 0, status: 'active' } });
    const again = await repo.purchase(movement(agent, 'purchase', 5_000_000, `x402:ref-${agent.agentId}`));
    expect(again).toEqual({ credited: false, reason: 'payment_consumed' });
    const second = await repo.purchase(movement(agent, 'purchase', 10_000, `x402:other-${agent.agentId}`));
    expect(second).toMatchObject({ credited: true, account: { balanceMicros: 5_010_000, purchasedMicros: 5_010_000 } });
    expect(await repo.paymentRecorded(`x402:ref-${agent.agentId}`)).toBe(true);
    expect(await repo.paymentRecorded('x402:never')).toBe(false);
  });

  it('concurrent presentations of one payment credit it exactly once', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    const ref = `card:chk_${agent.agentId}`;
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => repo.purchase(movement(agent, 'purchase', 1_000_000, ref))));
    expect(outcomes.filter((o) => o.credited)).toHaveLength(1);
    expect((await repo.account('sluice', agent))?.balanceMicros).toBe(1_000_000);
  });

  it('draws never take the balance below zero, and the ledger records what was taken', async () => {
    const receipt: CreditHolder = { kind: 'receipt', receiptId: receiptHash(newReceiptId()) };
    await repo.purchase(movement(receipt, 'purchase', 100, `x402:${receipt.receiptId}`));
    expect(await repo.draw(movement(receipt, 'draw', -60, null))).toBe(40);
    expect(await repo.draw(movement(receipt, 'draw', -60, null))).toBe(0);
    const ledger = await repo.movements('sluice', receipt);
    expect(ledger.map((m) => [m.kind, m.amountMicros])).toEqual([['purchase', 100], ['draw', -60], ['draw', -40]]);
    expect(await repo.account('sluice', receipt)).toMatchObject({ balanceMicros: 0, purchasedMicros: 100, consumedMicros: 100 });
  });

  it('a refund or clawback is a debit clamped at zero, once per reference', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    await repo.purchase(movement(agent, 'purchase', 300, `x402:p-${agent.agentId}`));
    await repo.draw(movement(agent, 'draw', -200, null));
    const refund = await repo.reverse(movement(agent, 'refund', -300, `refund:p-${agent.agentId}`));
    expect(refund).toMatchObject({ credited: true, account: { balanceMicros: 0 } });
    expect(await repo.reverse(movement(agent, 'refund', -300, `refund:p-${agent.agentId}`))).toEqual({ credited: false, reason: 'payment_consumed' });
    expect((await repo.movements('sluice', agent)).map((m) => m.amountMicros)).toEqual([300, -200, -100]);
  });

  it('accounts are per seller: the same holder elsewhere has nothing', async () => {
    const receipt: CreditHolder = { kind: 'receipt', receiptId: receiptHash(newReceiptId()) };
    await repo.purchase(movement(receipt, 'purchase', 50, `x402:s-${receipt.receiptId}`, 'seller-a'));
    expect(await repo.account('seller-b', receipt)).toBeUndefined();
    expect((await repo.account('seller-a', receipt))?.balanceMicros).toBe(50);
  });

  it('balances rebuild from the ledger: a tampered total is put back', async () => {
    const agent: CreditHolder = { kind: 'agent', agentId: `agt_${newId('')}` };
    await repo.purchase(movement(agent, 'purchase', 1_000, `x402:r-${agent.agentId}`));
    await repo.draw(movement(agent, 'draw', -250, null));
    expect(await repo.rebuildBalances()).toBe(0);
    await database.db.updateTable('storefront_accounts').set({ balance_micros: 999_999 }).where('holder_id', '=', agent.agentId).execute();
    expect(await repo.rebuildBalances()).toBe(1);
    expect(await repo.account('sluice', agent)).toMatchObject({ balanceMicros: 750, purchasedMicros: 1_000, consumedMicros: 250 });
  });

  it('checkouts round-trip', async () => {
    const id = newId('chk_');
    await repo.insertCheckout({ id, sellerId: 'sluice', agentId: 'agt_1', planId: 'credits', amountMicros: 500_000, provider: 'fake', createdAtMs: NOW });
    expect(await repo.checkout(id)).toEqual({ id, sellerId: 'sluice', agentId: 'agt_1', planId: 'credits', amountMicros: 500_000, provider: 'fake', createdAtMs: NOW });
    expect(await repo.checkout('chk_missing')).toBeUndefined();
  });
});

describe.each(cases)('migration 0008 on $name', ({ open }) => {
  it('creates the storefront tables and drops them on the way down', async () => {
    const database = await open();
    try {
      await migrateToLatest(database);
      await sql`select payment_ref from storefront_ledger`.execute(database.db);
      const migrator = await migratorFor(database);
      expect((await migrator.migrateTo('0007-outbox')).error).toBeUndefined();
      await expect(sql`select payment_ref from storefront_ledger`.execute(database.db)).rejects.toThrow(/storefront_ledger/);
      await expect(sql`select holder_id from storefront_accounts`.execute(database.db)).rejects.toThrow(/storefront_accounts/);
      await migrateToLatest(database);
      await sql`select agent_id from storefront_checkouts`.execute(database.db);
    } finally {
      await database.close();
    }
  });
});
