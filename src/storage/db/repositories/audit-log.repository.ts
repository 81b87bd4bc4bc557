/** The audit log's table: inserts and reads only (the class has no update or delete, and nothing else writes the table). */
import type { AuditLogTable, Database } from '../database.js';
import type { ActorType, AuditEntry, AuditFilter, AuditStore } from '../../../domain/audit/audit.types.js';
import type { Page } from '../../../domain/shared/pagination.js';

const toEntry = (row: AuditLogTable): AuditEntry => ({
  id: row.id,
  createdAtMs: Number(row.created_at),
  actor: { type: row.actor_type as ActorType, id: row.actor_id, ip: row.ip },
  action: row.action,
  targetType: row.target_type,
  targetId: row.target_id,
  projectId: row.project_id,
  detail: JSON.parse(row.detail) as Record<string, unknown>,
});

export class AuditLogRepository implements AuditStore {
  constructor(private readonly database: Database) {}

  async append(entry: AuditEntry): Promise<void> {
    await this.database.db
      .insertInto('audit_log')
      .values({
        id: entry.id,
        created_at: entry.createdAtMs,
        actor_type: entry.actor.type,
        actor_id: entry.actor.id,
        action: entry.action,
        target_type: entry.targetType,
        target_id: entry.targetId,
        project_id: entry.projectId,
        detail: JSON.stringify(entry.detail),
        ip: entry.actor.ip,
      })
      .execute();
  }

  async list(filter: AuditFilter, limit: number, after?: string): Promise<Page<AuditEntry>> {
    let query = this.database.db.selectFrom('audit_log').selectAll();
    if (filter.projectId !== undefined) query = query.where('project_id', '=', filter.projectId);
    if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.sinceMs !== undefined) query = query.where('created_at', '>=', filter.sinceMs);
    if (filter.untilMs !== undefined) query = query.where('created_at', '<', filter.untilMs);
    if (after !== undefined) query = query.where('id', '<', after);
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    return { items: rows.slice(0, limit).map(toEntry), hasMore: rows.length > limit };
  }
}
