/**
 * What an API key spent since a moment: the sum of its usage records' cost, read along
 * the index on (key_id, created_at, cost_micros) (migration 0020), so the sum never
 * reads the table. Synchronously on embedded SQLite when no transaction is open.
 */
import { sql } from 'kysely';
import { CompiledQueries, kyselyQuery, type Database, type SqlStatement } from '../database.js';
import type { SpendStore } from '../../../domain/billing/budget-ledger.port.js';

interface SpentRow {
  spent: number | string | null;
}

export class KeySpendRepository implements SpendStore {
  readonly #compiled = new CompiledQueries();

  constructor(private readonly database: Database) {}

  async spentSince(keyId: string, sinceMs: number): Promise<number> {
    const { rows } = await this.database.db.executeQuery(kyselyQuery<SpentRow>(this.#statement(keyId, sinceMs)));
    return Number(rows[0]?.spent ?? 0);
  }

  spentNow(keyId: string, sinceMs: number): number | null {
    const sync = this.database.sync;
    if (!sync?.idle) return null;
    return Number(sync.get<SpentRow>(this.#statement(keyId, sinceMs))?.spent ?? 0);
  }

  #statement(keyId: string, sinceMs: number): SqlStatement {
    const build = () =>
      this.database.db
        .selectFrom('usage_records')
        .select(sql<number>`coalesce(sum(cost_micros), 0)`.as('spent'))
        .where('key_id', '=', keyId)
        .where('created_at', '>=', sinceMs);
    return this.#compiled.statement('spent', build, [keyId, sinceMs]);
  }
}
