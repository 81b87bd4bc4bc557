import { sql } from 'kysely';
import type { ApiKeysTable, Database } from '../database.js';
import type { ApiKeyRecord, ApiKeyStore } from '../../../domain/identity/api-key.types.js';
import { KEY_REVOKED_CHANNEL } from '../key-revocation-feed.js';


const toRecord = (row: ApiKeysTable): ApiKeyRecord => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  prefix: row.prefix,
  keyHash: row.key_hash,
  createdAtMs: Number(row.created_at),
  revokedAtMs: row.revoked_at === null ? null : Number(row.revoked_at),
});

export class ApiKeysRepository implements ApiKeyStore {
  constructor(private readonly database: Database) {}

  async insert(key: ApiKeyRecord): Promise<void> {
    await this.database.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        project_id: key.projectId,
        name: key.name,
        prefix: key.prefix,
        key_hash: key.keyHash,
        created_at: key.createdAtMs,
        revoked_at: key.revokedAtMs,
      })
      .execute();
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listByProject(projectId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Marks the key revoked (keeping the first revocation time); returns the record after.
   * On PostgreSQL the same statement notifies the other replicas (key-revocation-feed.ts),
   * so the announcement goes out exactly when the revocation commits.
   */
  async revoke(id: string, nowMs: number): Promise<ApiKeyRecord | undefined> {
    const revoke = this.database.db
      .updateTable('api_keys')
      .set({ revoked_at: nowMs })
      .where('id', '=', id)
      .where('revoked_at', 'is', null);
    if (this.database.flavor === 'postgres') {
      await this.database.db
        .with('revoked', () => revoke.returning('key_hash'))
        .selectFrom('revoked')
        .select(sql`pg_notify(${KEY_REVOKED_CHANNEL}, key_hash)`.as('notified'))
        .execute();
    } else await revoke.execute();
    return this.findById(id);
  }
}
