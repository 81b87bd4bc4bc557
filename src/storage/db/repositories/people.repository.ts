/** Users and project memberships (migration 0017). */
import type { Database, UsersTable } from '../database.js';
import type { GrantedBy, Membership, PeopleStore, ProjectRole, User, UserProject } from '../../../domain/people/people.types.js';
import type { Page } from '../../../domain/shared/pagination.js';

type UserRow = Omit<UsersTable, 'operator_mapped'> & { operator_mapped: number };

const toUser = (row: UserRow): User => ({
  id: row.id,
  email: row.email,
  name: row.name,
  operator: Number(row.operator) === 1 || Number(row.operator_mapped) === 1,
  operatorByHand: Number(row.operator) === 1,
  oidc: row.oidc_issuer !== null && row.oidc_subject !== null ? { issuer: row.oidc_issuer, subject: row.oidc_subject } : null,
  createdAtMs: Number(row.created_at),
});

const toMembership = (row: { project_id: string; user_id: string; role: string; created_at: number; granted_by: string }): Membership => ({
  projectId: row.project_id,
  userId: row.user_id,
  role: row.role as ProjectRole,
  createdAtMs: Number(row.created_at),
  grantedBy: row.granted_by as GrantedBy,
});

export class PeopleRepository implements PeopleStore {
  constructor(private readonly database: Database) {}

  async insertUser(user: User): Promise<User | undefined> {
    const row = await this.database.db
      .insertInto('users')
      .values({ id: user.id, email: user.email, name: user.name, operator: user.operatorByHand ? 1 : 0, oidc_issuer: user.oidc?.issuer ?? null, oidc_subject: user.oidc?.subject ?? null, created_at: user.createdAtMs })
      .onConflict((c) => c.column('email').doNothing())
      .returningAll()
      .executeTakeFirst();
    return row && toUser(row);
  }

  async findUser(id: string): Promise<User | undefined> {
    const row = await this.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  async findByOidc(issuer: string, subject: string): Promise<User | undefined> {
    const row = await this.database.db.selectFrom('users').selectAll().where('oidc_issuer', '=', issuer).where('oidc_subject', '=', subject).executeTakeFirst();
    return row && toUser(row);
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const row = await this.database.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    return row && toUser(row);
  }

  async listUsers(limit: number, after?: string): Promise<Page<User> | undefined> {
    let query = this.database.db.selectFrom('users').selectAll();
    if (after !== undefined) {
      if (!(await this.findUser(after))) return undefined;
      query = query.where('id', '<', after);
    }
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toUser), hasMore: rows.length > limit };
  }

  async updateUser(id: string, change: { name?: string | null; operator?: boolean; operatorMapped?: boolean; oidc?: User['oidc'] }): Promise<User | undefined> {
    const set: Partial<UserRow> = {};
    if (change.name !== undefined) set.name = change.name;
    if (change.operator !== undefined) set.operator = change.operator ? 1 : 0;
    if (change.operatorMapped !== undefined) set.operator_mapped = change.operatorMapped ? 1 : 0;
    if (change.oidc !== undefined) Object.assign(set, { oidc_issuer: change.oidc?.issuer ?? null, oidc_subject: change.oidc?.subject ?? null });
    if (Object.keys(set).length === 0) return this.findUser(id);
    const row = await this.database.db.updateTable('users').set(set).where('id', '=', id).returningAll().executeTakeFirst();
    return row && toUser(row);
  }

  async deleteUser(id: string): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('console_sessions').where('user_id', '=', id).execute();
      await trx.deleteFrom('project_members').where('user_id', '=', id).execute();
      const result = await trx.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }

  async putMembership(membership: Membership): Promise<Membership> {
    await this.database.db
      .insertInto('project_members')
      .values({ project_id: membership.projectId, user_id: membership.userId, role: membership.role, created_at: membership.createdAtMs, granted_by: membership.grantedBy })
      .onConflict((c) => c.columns(['project_id', 'user_id']).doUpdateSet({ role: membership.role, granted_by: membership.grantedBy }))
      .execute();
    return membership;
  }

  async findMembership(projectId: string, userId: string): Promise<Membership | undefined> {
    const row = await this.database.db.selectFrom('project_members').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
    return row && toMembership(row);
  }

  async listMembers(projectId: string): Promise<Membership[]> {
    const rows = await this.database.db.selectFrom('project_members').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('user_id').execute();
    return rows.map(toMembership);
  }

  async membershipsOf(userId: string): Promise<Membership[]> {
    const rows = await this.database.db.selectFrom('project_members').selectAll().where('user_id', '=', userId).orderBy('project_id').execute();
    return rows.map(toMembership);
  }

  async projectsOf(userId: string): Promise<UserProject[]> {
    const rows = await this.database.db
      .selectFrom('project_members as m')
      .innerJoin('projects as p', 'p.id', 'm.project_id')
      .select(['m.project_id', 'p.name', 'm.role'])
      .where('m.user_id', '=', userId)
      .orderBy('p.name')
      .execute();
    return rows.map((r) => ({ projectId: r.project_id, projectName: r.name, role: r.role as ProjectRole }));
  }

  async deleteMembership(projectId: string, userId: string): Promise<boolean> {
    const result = await this.database.db.deleteFrom('project_members').where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
