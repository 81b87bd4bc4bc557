/**
 * The storefront's PayerDebit (payer kinds `agent` and `receipt`): storefront calls'
 * draws on the seller's credit ledger, written in the transaction of their usage records.
 * Per holder in a transaction, two statements, whatever the number of calls: one insert
 * of a ledger movement per record, and one update of the account by their sum. Each
 * movement takes at most what the account holds after the records before it (never below
 * zero), exactly as if they had drawn one after another, and the account loses what the
 * movements took, so the ledger stays the one source of balances. A movement's id is
 * derived from its usage record's, so a call draws once: a replayed record fails on its
 * own primary key, and the draw with it.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { CompiledQueries, type Database, type SqlStatement, type Tables } from '../database.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';
import type { PayerDebit } from './usage.repository.js';

/** Row counts up to this bound get a compiled statement each; a busier transaction compiles its own. */
const MAX_COMPILED_ROWS = 32;

/** One holder's records in a transaction, in order. */
interface HolderDraws {
  sellerId: string;
  kind: string;
  id: string;
  records: UsageRecord[];
}

export class StorefrontLedgerDebit implements PayerDebit {
  readonly #compiled = new CompiledQueries();
  readonly #least: RawBuilder<unknown>;
  readonly #greatest: RawBuilder<unknown>;
  readonly #lock: RawBuilder<unknown>;

  /** `sellerOfProject`: the seller of each storefront tenant project id. */
  constructor(
    database: Pick<Database, 'flavor'>,
    private readonly sellerOfProject: ReadonlyMap<string, string>,
  ) {
    const postgres = database.flavor === 'postgres';
    this.#least = sql.raw(postgres ? 'least' : 'min');
    this.#greatest = sql.raw(postgres ? 'greatest' : 'max');
    this.#lock = sql.raw(postgres ? ' for update of account' : '');
  }

  statements(executor: Kysely<Tables>, records: readonly UsageRecord[]): SqlStatement[] {
    const statements: SqlStatement[] = [];
    for (const draws of this.#byHolder(records)) statements.push(this.#movements(executor, draws), this.#account(executor, draws));
    return statements;
  }

  #byHolder(records: readonly UsageRecord[]): Iterable<HolderDraws> {
    const holders = new Map<string, HolderDraws>();
    for (const record of records) {
      const sellerId = this.sellerOfProject.get(record.projectId);
      if (sellerId === undefined) throw new Error('a storefront payer\'s usage record outside a storefront project');
      const { kind, id } = record.payer;
      const key = `${sellerId}\n${kind}\n${id}`;
      const draws = holders.get(key);
      if (draws) draws.records.push(record);
      else holders.set(key, { sellerId, kind, id, records: [record] });
    }
    return holders.values();
  }

  /**
   * One movement per record: its cost, clamped to what the account holds less the costs of
   * the holder's records before it in this transaction (read, and locked on PostgreSQL,
   * before the account's update).
   */
  #movements(executor: Kysely<Tables>, { sellerId, kind, id, records }: HolderDraws): SqlStatement {
    const parameters: unknown[] = [];
    let before = 0;
    for (const record of records) {
      parameters.push(`mov_${record.id}`.slice(0, 64), record.costMicros, before, `${record.model} ${record.requestId}`.slice(0, 256), record.createdAtMs);
      before += record.costMicros;
    }
    parameters.push(sellerId, kind, id);
    const build = () => {
      const rows = records.map((_, i) => {
        const [movementId, cost, costPrior, detail, createdAt] = parameters.slice(i * 5, i * 5 + 5);
        return sql`(cast(${movementId} as text), cast(${cost} as bigint), cast(${costPrior} as bigint), cast(${detail} as text), cast(${createdAt} as bigint))`;
      });
      const taken = sql`${this.#least}(draws.cost, ${this.#greatest}(0, account.balance_micros - draws.prior))`;
      const query = sql`with draws (id, cost, prior, detail, created_at) as (values ${sql.join(rows)})
        insert into storefront_ledger (id, seller_id, holder_kind, holder_id, kind, amount_micros, payment_ref, rail, detail, created_at)
        select draws.id, account.seller_id, account.holder_kind, account.holder_id, 'draw', -${taken}, null, null, draws.detail, draws.created_at
        from draws cross join storefront_accounts account
        where account.seller_id = ${sellerId} and account.holder_kind = ${kind} and account.holder_id = ${id}${this.#lock}`;
      return { compile: () => query.compile(executor) };
    };
    if (records.length > MAX_COMPILED_ROWS) return build().compile();
    return this.#compiled.statement(`movements:${records.length}`, build, parameters);
  }

  /** The account loses what the movements took: their costs' sum, at most its balance. */
  #account(executor: Kysely<Tables>, { sellerId, kind, id, records }: HolderDraws): SqlStatement {
    let total = 0;
    let updatedAt = 0;
    for (const record of records) {
      total += record.costMicros;
      updatedAt = Math.max(updatedAt, record.createdAtMs);
    }
    const build = () => {
      const taken = sql`${this.#least}(cast(${total} as bigint), ${this.#greatest}(0, balance_micros))`;
      const query = sql`update storefront_accounts
        set balance_micros = balance_micros - ${taken}, consumed_micros = consumed_micros + ${taken}, updated_at = cast(${updatedAt} as bigint)
        where seller_id = ${sellerId} and holder_kind = ${kind} and holder_id = ${id}`;
      return { compile: () => query.compile(executor) };
    };
    return this.#compiled.statement('account', build, [total, total, updatedAt, sellerId, kind, id]);
  }
}
