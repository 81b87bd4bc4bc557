import type { ExpressionBuilder } from 'kysely';
import type { Database, FilesTable, Tables } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type { FileListQuery, FilePurpose, FileRecord, FileStatus, FileStore, RetiredFile } from '../../../domain/files/files.types.js';
import { ACTIVE_STATUSES } from '../../../domain/batches/batch.types.js';

const toRecord = (row: FilesTable): FileRecord => ({
  id: row.id,
  projectId: row.project_id,
  purpose: row.purpose as FilePurpose,
  filename: row.filename,
  bytes: Number(row.bytes),
  blobKey: row.blob_key,
  isError: Number(row.is_error) === 1,
  status: row.status as FileStatus,
  batchId: row.batch_id,
  createdAtMs: Number(row.created_at),
  expiresAtMs: row.expires_at === null ? null : Number(row.expires_at),
  deletedAtMs: row.deleted_at === null ? null : Number(row.deleted_at),
});

export const fileRow = (file: FileRecord): FilesTable => ({
  id: file.id,
  project_id: file.projectId,
  purpose: file.purpose,
  filename: file.filename,
  bytes: file.bytes,
  blob_key: file.blobKey,
  is_error: file.isError ? 1 : 0,
  status: file.status,
  batch_id: file.batchId,
  created_at: file.createdAtMs,
  expires_at: file.expiresAtMs,
  deleted_at: file.deletedAtMs,
  purged_at: null,
});

/** Not deleted and not past its retention: the only records the API shows. */
const isLive = (eb: ExpressionBuilder<Tables, 'files'>, nowMs: number) =>
  eb.and([eb('deleted_at', 'is', null), eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowMs)])]);

/**
 * File records. Every read is scoped to a project and hides soft-deleted and expired
 * records (an expired record is read as deleted; only the janitor still sees it).
 */
export class FilesRepository implements FileStore {
  constructor(private readonly database: Database) {}

  async insert(file: FileRecord): Promise<void> {
    await this.database.db.insertInto('files').values(fileRow(file)).execute();
  }

  /** The live (not deleted, not expired at `nowMs`) file of this project, if any. */
  async findLive(projectId: string, id: string, nowMs: number): Promise<FileRecord | undefined> {
    const row = await this.database.db
      .selectFrom('files')
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where((eb) => isLive(eb, nowMs))
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** Ids are time-ordered, so ordering by id is ordering by creation time. */
  async list(projectId: string, query: FileListQuery, nowMs: number): Promise<Page<FileRecord>> {
    let q = this.database.db
      .selectFrom('files')
      .selectAll()
      .where('project_id', '=', projectId)
      .where((eb) => isLive(eb, nowMs));
    if (query.purpose) q = q.where('purpose', '=', query.purpose);
    if (query.after) q = q.where('id', query.order === 'desc' ? '<' : '>', query.after);
    const rows = await q.orderBy('id', query.order).limit(query.limit + 1).execute();
    return { items: rows.slice(0, query.limit).map(toRecord), hasMore: rows.length > query.limit };
  }

  /** Marks the file deleted; false when it was already gone. */
  async softDelete(projectId: string, id: string, nowMs: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable('files')
      .set({ deleted_at: nowMs })
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Whether a live (not deleted, not expired) record still points at this blob. */
  async blobHasLiveRecord(blobKey: string, nowMs: number): Promise<boolean> {
    const row = await this.database.db
      .selectFrom('files')
      .select('id')
      .where('blob_key', '=', blobKey)
      .where((eb) => isLive(eb, nowMs))
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Deleted or expired records whose blob has not been removed yet, leaving out blobs
   * an unfinished batch still reads (their batch's end collects them; listing them here
   * would only let them crowd out the rest).
   */
  async retiredUnpurged(nowMs: number, limit: number): Promise<RetiredFile[]> {
    const rows = await this.database.db
      .selectFrom('files as f')
      .select(['f.id', 'f.blob_key'])
      .where('f.purged_at', 'is', null)
      .where((eb) => eb.or([eb('f.deleted_at', 'is not', null), eb('f.expires_at', '<=', nowMs)]))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('batches as b')
              .select('b.id')
              .whereRef('b.input_blob_key', '=', 'f.blob_key')
              .where('b.status', 'in', [...ACTIVE_STATUSES]),
          ),
        ),
      )
      .orderBy('f.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, blobKey: r.blob_key }));
  }

  /** Records that the blob of every retired record with this key is gone. Idempotent. */
  async markBlobPurged(blobKey: string, nowMs: number): Promise<void> {
    await this.database.db
      .updateTable('files')
      .set({ purged_at: nowMs })
      .where('blob_key', '=', blobKey)
      .where('purged_at', 'is', null)
      .where((eb) => eb.not(isLive(eb, nowMs)))
      .execute();
  }
}
