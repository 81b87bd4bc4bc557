import { sql } from 'kysely';
import type { CreditGrantsTable, Database } from '../database.js';
import type { CreditGrant, CreditGrantStore, Project } from '../../../domain/projects/project.types.js';
import { toProject } from './projects.repository.js';

const toGrant = (row: CreditGrantsTable): CreditGrant => ({
  id: row.id,
  projectId: row.project_id,
  amountMicros: Number(row.amount_micros),
  reason: row.reason,
  createdAtMs: Number(row.created_at),
});

export class CreditGrantsRepository implements CreditGrantStore {
  constructor(private readonly database: Database) {}

  async grant(grant: CreditGrant): Promise<Project | undefined> {
    return this.database.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('projects')
        .set({ balance_micros: sql`balance_micros + ${grant.amountMicros}` })
        .where('id', '=', grant.projectId)
        .returningAll()
        .executeTakeFirst();
      if (!row) return undefined;
      await trx
        .insertInto('credit_grants')
        .values({ id: grant.id, project_id: grant.projectId, amount_micros: grant.amountMicros, reason: grant.reason, created_at: grant.createdAtMs })
        .execute();
      return toProject(row);
    });
  }

  async listByProject(projectId: string, limit: number): Promise<CreditGrant[]> {
    const rows = await this.database.db.selectFrom('credit_grants').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toGrant);
  }
}
