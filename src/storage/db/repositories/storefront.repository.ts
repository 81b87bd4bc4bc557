/**
 * The storefront's credit ledger and accounts. Every balance change is a ledger movement
 * written in the same transaction as the account's new totals; a purchase's payment
 * reference is unique, so a payment credits once however often it is presented.
 */
import { sql, type Transaction } from 'kysely';
import { CompiledQueries, type Database, type StorefrontAccountsTable, type StorefrontLedgerTable, type Tables } from '../database.js';
import {
  holderKey,
  holderOf,
  type CheckoutRecord,
  type CreditAccount,
  type CreditHolder,
  type CreditMovement,
  type MovementKind,
  type PurchaseOutcome,
  type Rail,
  type StorefrontStore,
} from '../../../domain/storefront/storefront.types.js';

export const toAccount = (row: StorefrontAccountsTable): CreditAccount => ({
  sellerId: row.seller_id,
  holder: holderOf(row.holder_kind, row.holder_id),
  balanceMicros: Number(row.balance_micros),
  purchasedMicros: Number(row.purchased_micros),
  consumedMicros: Number(row.consumed_micros),
  status: row.status === 'revoked' ? 'revoked' : 'active',
  createdAtMs: Number(row.created_at),
  updatedAtMs: Number(row.updated_at),
});

export const toMovement = (row: StorefrontLedgerTable): CreditMovement => ({
  id: row.id,
  sellerId: row.seller_id,
  holder: holderOf(row.holder_kind, row.holder_id),
  kind: row.kind as MovementKind,
  amountMicros: Number(row.amount_micros),
  paymentRef: row.payment_ref,
  rail: row.rail as Rail | null,
  detail: row.detail,
  createdAtMs: Number(row.created_at),
});

const toLedgerRow = (m: CreditMovement): StorefrontLedgerTable => {
  const key = holderKey(m.holder);
  return {
    id: m.id,
    seller_id: m.sellerId,
    holder_kind: key.kind,
    holder_id: key.id,
    kind: m.kind,
    amount_micros: m.amountMicros,
    payment_ref: m.paymentRef,
    rail: m.rail,
    detail: m.detail,
    created_at: m.createdAtMs,
  };
};

type Trx = Transaction<Tables>;

export class StorefrontRepository implements StorefrontStore {
  readonly #compiled = new CompiledQueries();

  constructor(private readonly database: Database) {}

  #accountQuery(sellerId: string, kind: string, id: string) {
    return this.database.db
      .selectFrom('storefront_accounts')
      .selectAll()
      .where('seller_id', '=', sellerId)
      .where('holder_kind', '=', kind)
      .where('holder_id', '=', id);
  }

  async account(sellerId: string, holder: CreditHolder): Promise<CreditAccount | undefined> {
    const key = holderKey(holder);
    const row = await this.#accountQuery(sellerId, key.kind, key.id).executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }

  /** The account read synchronously (embedded SQLite with no transaction open), else null: every chat call reads one. */
  accountNow(sellerId: string, holder: CreditHolder): { account: CreditAccount | undefined } | null {
    const sync = this.database.sync;
    if (!sync?.idle) return null;
    const key = holderKey(holder);
    const statement = this.#compiled.statement('account', () => this.#accountQuery(sellerId, key.kind, key.id), [sellerId, key.kind, key.id]);
    const row = sync.get<StorefrontAccountsTable>(statement);
    return { account: row ? toAccount(row) : undefined };
  }

  async accountsOfAgent(sellerId: string, agentId: string): Promise<CreditAccount[]> {
    const rows = await this.database.db
      .selectFrom('storefront_accounts')
      .selectAll()
      .where('seller_id', '=', sellerId)
      .where('holder_kind', '=', 'agent')
      .where('holder_id', '=', agentId)
      .execute();
    return rows.map(toAccount);
  }

  async paymentRecorded(paymentRef: string): Promise<boolean> {
    const row = await this.database.db.selectFrom('storefront_ledger').select('id').where('payment_ref', '=', paymentRef).executeTakeFirst();
    return row !== undefined;
  }

  purchase(movement: CreditMovement): Promise<PurchaseOutcome> {
    return this.database.db.transaction().execute(async (trx) => {
      if (!(await this.#insertMovement(trx, movement))) return { credited: false, reason: 'payment_consumed' };
      const key = holderKey(movement.holder);
      const amount = movement.amountMicros;
      await trx
        .insertInto('storefront_accounts')
        .values({
          seller_id: movement.sellerId,
          holder_kind: key.kind,
          holder_id: key.id,
          balance_micros: amount,
          purchased_micros: amount,
          consumed_micros: 0,
          status: 'active',
          created_at: movement.createdAtMs,
          updated_at: movement.createdAtMs,
        })
        .onConflict((oc) =>
          oc.columns(['seller_id', 'holder_kind', 'holder_id']).doUpdateSet({
            balance_micros: sql<number>`storefront_accounts.balance_micros + ${amount}`,
            purchased_micros: sql<number>`storefront_accounts.purchased_micros + ${amount}`,
            updated_at: movement.createdAtMs,
          }),
        )
        .execute();
      return { credited: true, account: (await this.#account(trx, movement.sellerId, movement.holder))! };
    });
  }

  async draw(movement: CreditMovement): Promise<number> {
    const now = this.#drawNow(movement);
    if (now !== null) return now;
    return this.database.db.transaction().execute(async (trx) => {
      const charged = await this.#debit(trx, movement, -movement.amountMicros, 'consumed_micros');
      await trx.insertInto('storefront_ledger').values(toLedgerRow({ ...movement, amountMicros: -charged.amount })).execute();
      return charged.balance;
    });
  }

  reverse(movement: CreditMovement): Promise<PurchaseOutcome> {
    return this.database.db.transaction().execute(async (trx) => {
      const account = await this.#account(trx, movement.sellerId, movement.holder, true);
      if (!account) return { credited: false, reason: 'payment_consumed' };
      const amount = Math.min(-movement.amountMicros, Math.max(0, account.balanceMicros));
      if (!(await this.#insertMovement(trx, { ...movement, amountMicros: -amount }))) return { credited: false, reason: 'payment_consumed' };
      await this.#debit(trx, movement, amount, null);
      return { credited: true, account: (await this.#account(trx, movement.sellerId, movement.holder))! };
    });
  }

  async movements(sellerId: string, holder: CreditHolder): Promise<CreditMovement[]> {
    const key = holderKey(holder);
    const rows = await this.database.db
      .selectFrom('storefront_ledger')
      .selectAll()
      .where('seller_id', '=', sellerId)
      .where('holder_kind', '=', key.kind)
      .where('holder_id', '=', key.id)
      .orderBy('id')
      .execute();
    return rows.map(toMovement);
  }

  /** Sets every account's totals to what its ledger adds up to. */
  async rebuildBalances(): Promise<number> {
    return this.database.db.transaction().execute(async (trx) => {
      const sums = await trx
        .selectFrom('storefront_ledger')
        .select(['seller_id', 'holder_kind', 'holder_id'])
        .select(sql<number>`sum(amount_micros)`.as('balance'))
        .select(sql<number>`sum(case when kind = 'purchase' then amount_micros else 0 end)`.as('purchased'))
        .select(sql<number>`sum(case when kind = 'draw' then -amount_micros else 0 end)`.as('consumed'))
        .groupBy(['seller_id', 'holder_kind', 'holder_id'])
        .execute();
      let fixed = 0;
      for (const s of sums) {
        const result = await trx
          .updateTable('storefront_accounts')
          .set({ balance_micros: Number(s.balance), purchased_micros: Number(s.purchased), consumed_micros: Number(s.consumed) })
          .where('seller_id', '=', s.seller_id)
          .where('holder_kind', '=', s.holder_kind)
          .where('holder_id', '=', s.holder_id)
          .where((eb) =>
            eb.or([
              eb('balance_micros', '!=', Number(s.balance)),
              eb('purchased_micros', '!=', Number(s.purchased)),
              eb('consumed_micros', '!=', Number(s.consumed)),
            ]),
          )
          .executeTakeFirst();
        fixed += Number(result.numUpdatedRows);
      }
      return fixed;
    });
  }

  async insertCheckout(c: CheckoutRecord): Promise<void> {
    await this.database.db
      .insertInto('storefront_checkouts')
      .values({
        id: c.id,
        seller_id: c.sellerId,
        agent_id: c.agentId,
        plan_id: c.planId,
        amount_micros: c.amountMicros,
        provider: c.provider,
        created_at: c.createdAtMs,
      })
      .execute();
  }

  async checkout(id: string): Promise<CheckoutRecord | undefined> {
    const row = await this.database.db.selectFrom('storefront_checkouts').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      sellerId: row.seller_id,
      agentId: row.agent_id,
      planId: row.plan_id,
      amountMicros: Number(row.amount_micros),
      provider: row.provider,
      createdAtMs: Number(row.created_at),
    };
  }

  /**
   * A draw on embedded SQLite with no transaction open: the read and the one-transaction
   * write run synchronously, so nothing interleaves (every chat call draws once). Null
   * when the synchronous path is not available.
   */
  #drawNow(movement: CreditMovement): number | null {
    const sync = this.database.sync;
    const found = sync?.idle ? this.accountNow(movement.sellerId, movement.holder) : null;
    if (!sync || !found?.account) return null;
    const account = found.account;
    const amount = Math.min(-movement.amountMicros, Math.max(0, account.balanceMicros));
    const key = holderKey(movement.holder);
    const db = this.database.db;
    const balance = account.balanceMicros - amount;
    const consumed = account.consumedMicros + amount;
    const update = this.#compiled.statement(
      'draw:update',
      () => db.updateTable('storefront_accounts').set({ balance_micros: balance, consumed_micros: consumed, updated_at: movement.createdAtMs })
        .where('seller_id', '=', movement.sellerId).where('holder_kind', '=', key.kind).where('holder_id', '=', key.id),
      [balance, consumed, movement.createdAtMs, movement.sellerId, key.kind, key.id],
    );
    const row = toLedgerRow({ ...movement, amountMicros: -amount });
    const insert = this.#compiled.statement('draw:insert', () => db.insertInto('storefront_ledger').values(row), Object.values(row));
    sync.transaction([update, insert]);
    return balance;
  }

  /** Inserts the movement unless its payment reference is already recorded. */
  async #insertMovement(trx: Trx, movement: CreditMovement): Promise<boolean> {
    const result = await trx
      .insertInto('storefront_ledger')
      .values(toLedgerRow(movement))
      .onConflict((oc) => oc.column('payment_ref').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** Takes at most the balance (never below zero); the amount taken and the balance after. */
  async #debit(trx: Trx, movement: CreditMovement, micros: number, total: 'consumed_micros' | null) {
    const account = await this.#account(trx, movement.sellerId, movement.holder, true);
    if (!account) throw new Error('storefront debit of an account that does not exist');
    const amount = Math.min(micros, Math.max(0, account.balanceMicros));
    const key = holderKey(movement.holder);
    let update = trx
      .updateTable('storefront_accounts')
      .set({ balance_micros: account.balanceMicros - amount, updated_at: movement.createdAtMs })
      .where('seller_id', '=', movement.sellerId)
      .where('holder_kind', '=', key.kind)
      .where('holder_id', '=', key.id);
    if (total) update = update.set({ consumed_micros: account.consumedMicros + amount });
    await update.execute();
    return { amount, balance: account.balanceMicros - amount };
  }

  /** The account inside a transaction; `lock` takes the row lock first on PostgreSQL (SQLite has one writer). */
  async #account(trx: Trx, sellerId: string, holder: CreditHolder, lock = false): Promise<CreditAccount | undefined> {
    const key = holderKey(holder);
    let query = trx
      .selectFrom('storefront_accounts')
      .selectAll()
      .where('seller_id', '=', sellerId)
      .where('holder_kind', '=', key.kind)
      .where('holder_id', '=', key.id);
    if (lock && this.database.flavor === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }
}
