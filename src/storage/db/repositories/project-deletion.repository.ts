/**
 * A project's removal in one transaction (domain/projects/project-deletion.ts): refused
 * while a batch of it runs; otherwise keys revoked (announced to the other replicas on
 * PostgreSQL when the transaction commits), its log, members, sessions, stored responses
 * and batches deleted, its files marked deleted for the janitor, its row a tombstone.
 */
import { sql, type Transaction } from 'kysely';
import { ACTIVE_STATUSES } from '../../../domain/batches/batch.types.js';
import type { ProjectDeletionStore, ProjectRemoval } from '../../../domain/projects/project-deletion.port.js';
import type { Database, Tables } from '../database.js';
import { KEY_REVOKED_CHANNEL } from '../key-revocation-feed.js';

type Trx = Transaction<Tables>;

const count = (result: { numDeletedRows?: bigint; numUpdatedRows?: bigint }): number => Number(result.numDeletedRows ?? result.numUpdatedRows ?? 0n);

export class ProjectDeletionRepository implements ProjectDeletionStore {
  constructor(private readonly database: Database) {}

  remove(projectId: string, nowMs: number): Promise<{ running: number } | ProjectRemoval | null> {
    return this.database.db.transaction().execute(async (trx) => {
      // The project's row first: on PostgreSQL, a second deletion of it waits here for this one.
      let locked = trx.selectFrom('projects').select('id').where('id', '=', projectId).where('deleted_at', 'is', null);
      if (this.database.flavor === 'postgres') locked = locked.forUpdate();
      if (!(await locked.executeTakeFirst())) return null;
      const running = await trx
        .selectFrom('batches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId)
        .where('status', 'in', [...ACTIVE_STATUSES])
        .executeTakeFirstOrThrow();
      if (Number(running.n) > 0) return { running: Number(running.n) };
      const keys = await this.#revokeKeys(trx, projectId, nowMs);
      const log = await this.#deleteLog(trx, projectId);
      const members = count(await trx.deleteFrom('project_members').where('project_id', '=', projectId).executeTakeFirst());
      const consoleSessions = count(await trx.deleteFrom('console_sessions').where('project_id', '=', projectId).executeTakeFirst());
      const responses = await this.#deleteResponses(trx, projectId);
      const batches = await this.#deleteBatches(trx, projectId);
      const filesDeleted = count(
        await trx.updateTable('files').set({ deleted_at: nowMs }).where('project_id', '=', projectId).where('deleted_at', 'is', null).executeTakeFirst(),
      );
      await trx.updateTable('projects').set({ deleted_at: nowMs }).where('id', '=', projectId).execute();
      return {
        keyHashes: keys.hashes,
        blobKeys: log.blobKeys,
        removed: { keysRevoked: keys.revoked, requestLogEntries: log.entries, members, consoleSessions, responses, batches, filesDeleted },
      };
    });
  }

  async #revokeKeys(trx: Trx, projectId: string, nowMs: number): Promise<{ hashes: string[]; revoked: number }> {
    const rows = await trx.selectFrom('api_keys').select(['key_hash', 'previous_key_hash']).where('project_id', '=', projectId).execute();
    const revoked = count(await trx.updateTable('api_keys').set({ revoked_at: nowMs }).where('project_id', '=', projectId).where('revoked_at', 'is', null).executeTakeFirst());
    const hashes = rows.flatMap((r) => (r.previous_key_hash === null ? [r.key_hash] : [r.key_hash, r.previous_key_hash]));
    // Inside the transaction: PostgreSQL delivers the notifications when it commits, never if it rolls back.
    if (this.database.flavor === 'postgres') for (const hash of hashes) await sql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${hash})`.execute(trx);
    return { hashes, revoked };
  }

  async #deleteLog(trx: Trx, projectId: string): Promise<{ entries: number; blobKeys: string[] }> {
    const blobs = await trx.selectFrom('request_log_bodies').select('blob_key').where('project_id', '=', projectId).where('blob_key', 'is not', null).execute();
    await trx.deleteFrom('request_log_bodies').where('project_id', '=', projectId).execute();
    const entries = count(await trx.deleteFrom('request_log').where('project_id', '=', projectId).executeTakeFirst());
    await trx.deleteFrom('request_log_settings').where('project_id', '=', projectId).execute();
    return { entries, blobKeys: blobs.map((b) => b.blob_key!) };
  }

  async #deleteResponses(trx: Trx, projectId: string): Promise<number> {
    const owned = trx.selectFrom('responses').select('id').where('project_id', '=', projectId);
    await trx.deleteFrom('response_events').where('response_id', 'in', owned).execute();
    return count(await trx.deleteFrom('responses').where('project_id', '=', projectId).executeTakeFirst());
  }

  async #deleteBatches(trx: Trx, projectId: string): Promise<number> {
    const owned = trx.selectFrom('batches').select('id').where('project_id', '=', projectId);
    await trx.deleteFrom('batch_line_results').where('batch_id', 'in', owned).execute();
    await trx.deleteFrom('batch_shards').where('batch_id', 'in', owned).execute();
    return count(await trx.deleteFrom('batches').where('project_id', '=', projectId).executeTakeFirst());
  }
}
