import { sql } from 'kysely';
import { CompiledQueries, kyselyQuery, type Database, type ProjectsTable, type SqlStatement } from '../database.js';
import type { Project, ProjectStore } from '../../../domain/projects/project.types.js';
import type { BalanceStore } from '../../../domain/billing/balance-store.port.js';


export const toProject = (row: ProjectsTable): Project => ({
  id: row.id,
  name: row.name,
  balanceMicros: Number(row.balance_micros),
  createdAtMs: Number(row.created_at),
});

type BalanceRow = Pick<ProjectsTable, 'id' | 'balance_micros'>;

/** Balance reads of up to this many projects at once use a compiled statement. */
const MAX_COMPILED_IDS = 16;

export class ProjectsRepository implements ProjectStore, BalanceStore {
  readonly #compiled = new CompiledQueries();

  constructor(private readonly database: Database) {}

  async insert(project: Project): Promise<Project> {
    await this.database.db
      .insertInto('projects')
      .values({
        id: project.id,
        name: project.name,
        balance_micros: project.balanceMicros,
        created_at: project.createdAtMs,
      })
      .execute();
    return project;
  }

  /** Inserts the project unless one with its id exists (tenants the service owns, created at start-up); the stored project. */
  async insertIfAbsent(project: Project): Promise<Project> {
    await this.database.db
      .insertInto('projects')
      .values({ id: project.id, name: project.name, balance_micros: project.balanceMicros, created_at: project.createdAtMs })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return (await this.findById(project.id)) ?? project;
  }

  async findById(id: string): Promise<Project | undefined> {
    // A deleted project (a tombstone kept for its usage records) is not found.
    const row = await this.database.db.selectFrom('projects').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    return row ? toProject(row) : undefined;
  }

  /**
   * Newest first (creation time, then id); `after` is the last project of the previous
   * page. Undefined when `after` names no project.
   */
  async listPage(limit: number, after?: string): Promise<{ items: Project[]; hasMore: boolean } | undefined> {
    let query = this.database.db.selectFrom('projects').selectAll().where('deleted_at', 'is', null);
    if (after !== undefined) {
      const cursor = await this.findById(after);
      if (!cursor) return undefined;
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', cursor.createdAtMs),
          eb.and([eb('created_at', '=', cursor.createdAtMs), eb('id', '<', cursor.id)]),
        ]),
      );
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toProject), hasMore: rows.length > limit };
  }

  async balanceOf(id: string): Promise<number | undefined> {
    return (await this.balancesOf([id])).get(id);
  }

  /**
   * Balances of several projects in one query; absent projects are missing from the map.
   * On the embedded database this runs synchronously when it can (the credit check of
   * every request comes here).
   */
  async balancesOf(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const statement = this.#balancesStatement(ids);
    const sync = this.database.sync;
    const rows = sync?.idle
      ? sync.all<BalanceRow>(statement)
      : (await this.database.db.executeQuery(kyselyQuery<BalanceRow>(statement))).rows;
    return new Map(rows.map((row) => [row.id, Number(row.balance_micros)]));
  }

  /**
   * The balance read at once, without a promise, when the database allows it (embedded
   * SQLite with no transaction open); `null` when it does not, and the caller reads it
   * with balancesOf(). `balance` is undefined for an unknown project.
   */
  balanceNow(id: string): { balance: number | undefined } | null {
    const sync = this.database.sync;
    if (!sync?.idle) return null;
    const row = sync.get<{ balance_micros: number }>(this.#balancesStatement([id]));
    return { balance: row ? Number(row.balance_micros) : undefined };
  }

  /** Adds `deltaMicros` (negative to debit) in one statement; returns the project after. */
  async adjustBalance(id: string, deltaMicros: number): Promise<Project | undefined> {
    const row = await this.database.db
      .updateTable('projects')
      .set({ balance_micros: sql`balance_micros + ${deltaMicros}` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toProject(row) : undefined;
  }

  #balancesQuery(ids: readonly string[]) {
    return this.database.db.selectFrom('projects').select(['id', 'balance_micros']).where('id', 'in', ids);
  }

  #balancesStatement(ids: readonly string[]): SqlStatement {
    const build = () => this.#balancesQuery(ids);
    return ids.length <= MAX_COMPILED_IDS ? this.#compiled.statement(`balances:${ids.length}`, build, [...ids]) : build().compile();
  }
}
