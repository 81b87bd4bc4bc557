/**
 * The storefront's PayerDebit (payer kinds `agent` and `receipt`): a storefront call's
 * draw on the seller's credit ledger, written in the transaction of its usage record.
 * Per record, one ledger movement and one account update, each taking at most what the
 * account holds (never below zero), so the ledger stays the one source of balances. The
 * movement's id is derived from the usage record's, so a call draws once: a replayed
 * record fails on its own primary key, and the draw with it.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, SqlStatement, Tables } from '../database.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';
import type { PayerDebit } from './usage.repository.js';

export class StorefrontLedgerDebit implements PayerDebit {
  /** `sellerOfProject`: the seller of each storefront tenant project id. */
  constructor(
    private readonly database: Pick<Database, 'flavor'>,
    private readonly sellerOfProject: ReadonlyMap<string, string>,
  ) {}

  statements(executor: Kysely<Tables>, records: readonly UsageRecord[]): SqlStatement[] {
    return records.flatMap((record) => this.#draw(executor, record));
  }

  #draw(executor: Kysely<Tables>, record: UsageRecord): SqlStatement[] {
    const sellerId = this.sellerOfProject.get(record.projectId);
    if (sellerId === undefined) throw new Error('a storefront payer\'s usage record outside a storefront project');
    const postgres = this.database.flavor === 'postgres';
    const least = sql.raw(postgres ? 'least' : 'min');
    const greatest = sql.raw(postgres ? 'greatest' : 'max');
    const cost = sql`cast(${record.costMicros} as bigint)`;
    const taken = sql`${least}(${cost}, ${greatest}(0, balance_micros))`;
    const holder = sql`seller_id = ${sellerId} and holder_kind = ${record.payer.kind} and holder_id = ${record.payer.id}`;
    const movementId = `mov_${record.id}`.slice(0, 64);
    const detail = `${record.model} ${record.requestId}`.slice(0, 256);
    // The movement first, reading the balance it takes from (locked on PostgreSQL), then the account.
    const movement = sql`insert into storefront_ledger (id, seller_id, holder_kind, holder_id, kind, amount_micros, payment_ref, rail, detail, created_at)
      select cast(${movementId} as text), seller_id, holder_kind, holder_id, 'draw', -${taken}, null, null, cast(${detail} as text), cast(${record.createdAtMs} as bigint)
      from storefront_accounts where ${holder}${sql.raw(postgres ? ' for update' : '')}`;
    const account = sql`update storefront_accounts
      set balance_micros = balance_micros - ${taken}, consumed_micros = consumed_micros + ${taken}, updated_at = cast(${record.createdAtMs} as bigint)
      where ${holder}`;
    return [movement.compile(executor), account.compile(executor)];
  }
}
