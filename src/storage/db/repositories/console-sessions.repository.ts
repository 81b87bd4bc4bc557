import type { Database } from '../database.js';
import type { ConsoleRole, ConsoleSession, SessionStore } from '../../../domain/console/session-store.port.js';

export class ConsoleSessionsRepository implements SessionStore {
  constructor(private readonly database: Database) {}

  async insert(idHash: string, session: ConsoleSession, createdAtMs: number): Promise<void> {
    await this.database.db
      .insertInto('console_sessions')
      .values({
        id_hash: idHash,
        role: session.role,
        project_id: session.projectId,
        key_id: session.keyId,
        user_id: session.userId,
        created_at: createdAtMs,
        expires_at: session.expiresAtMs,
      })
      .execute();
  }

  /** One query: the session, unexpired, and its key (if any) still active: not revoked, not expired. */
  async findLive(idHash: string, nowMs: number): Promise<ConsoleSession | undefined> {
    const row = await this.database.db
      .selectFrom('console_sessions as s')
      .leftJoin('api_keys as k', 'k.id', 's.key_id')
      .select(['s.role', 's.project_id', 's.key_id', 's.user_id', 's.expires_at', 'k.revoked_at', 'k.expires_at as key_expires_at'])
      .where('s.id_hash', '=', idHash)
      .where('s.expires_at', '>', nowMs)
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.key_id !== null && (row.revoked_at !== null || (row.key_expires_at !== null && Number(row.key_expires_at) <= nowMs))) return undefined;
    return { role: row.role as ConsoleRole, projectId: row.project_id, keyId: row.key_id, userId: row.user_id, expiresAtMs: Number(row.expires_at) };
  }

  async delete(idHash: string): Promise<void> {
    await this.database.db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteExpired(nowMs: number): Promise<void> {
    await this.database.db.deleteFrom('console_sessions').where('expires_at', '<=', nowMs).execute();
  }
}
