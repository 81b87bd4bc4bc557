/**
 * Files: streamed uploads into blob storage, listing, download and soft delete.
 *
 * Deletion is soft: the record disappears at once, but its blob stays while an active
 * batch still reads it; whoever ends the last such batch collects the blob
 * (collectBlob), so no blob outlives both its record and its readers. Expiry (30 days
 * after creation) hides a record the same way, read against the injected clock; the
 * janitor (purgeRetired) removes the blobs of deleted and expired records whose
 * collection was deferred or lost to a crash.
 */
import type { Readable } from 'node:stream';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from './blob-store.port.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Page } from '../shared/pagination.js';
import {
  emptyFile,
  fileNotFound,
  fileTooLarge,
  invalidFileType,
  invalidMultipart,
  invalidPurpose,
  missingFile,
  storageError,
} from './files.errors.js';
import {
  FILE_RETENTION_MS,
  MAX_UPLOAD_BYTES,
  UploadStreamError,
  type FileListQuery,
  type FileRecord,
  type FileStore,
  type UploadPart,
} from './files.types.js';

export interface FilesServiceDeps {
  files: FileStore;
  blobs: BlobStore;
  clock: Clock;
  /** Whether a batch that has not ended still reads this blob. */
  blobInUse(blobKey: string): Promise<boolean>;
  /** Reports blob deletions that failed (the record is already gone; the blob leaks). */
  onCollectError?(blobKey: string, error: unknown): void;
}

interface StoredUpload {
  id: string;
  blobKey: string;
  filename: string;
  bytes: number;
}

export const blobKeyOfFile = (fileId: string): string => `files/${fileId}.jsonl`;

/** The record of a file the server wrote (a batch's output or error file); it expires after `expiresAfterMs` (default 30 days). */
export function outputFileRecord(input: {
  id: string;
  projectId: string;
  batchId: string;
  filename: string;
  blobKey: string;
  bytes: number;
  isError: boolean;
  createdAtMs: number;
  expiresAfterMs?: number;
}): FileRecord {
  const { expiresAfterMs, ...record } = input;
  return {
    ...record,
    purpose: 'batch_output',
    status: 'processed',
    expiresAtMs: input.createdAtMs + (expiresAfterMs ?? FILE_RETENTION_MS),
    deletedAtMs: null,
  };
}

export class FilesService {
  constructor(private readonly deps: FilesServiceDeps) {}

  /**
   * Consumes the parts of an upload in order. `purpose` may come before or after the
   * file: when before, a bad purpose is refused before the file is read; when after, the
   * stored blob is removed again. The file streams to storage and is cut off as soon as it
   * passes MAX_UPLOAD_BYTES.
   */
  async upload(projectId: string, parts: AsyncIterable<UploadPart>): Promise<FileRecord> {
    let purpose: string | undefined;
    let stored: StoredUpload | undefined;
    try {
      for await (const part of parts) {
        if (part.kind === 'field') {
          if (part.name === 'purpose') {
            purpose = part.value;
            if (purpose !== 'batch') throw invalidPurpose(purpose);
          }
          continue;
        }
        if (part.name !== 'file') {
          part.stream.resume(); // unknown file fields are read past, not stored
          continue;
        }
        if (stored) throw invalidMultipart('only one "file" may be uploaded');
        stored = await this.#store(part.filename, part.stream);
      }
      if (purpose !== 'batch') throw invalidPurpose(purpose);
      if (!stored) throw missingFile();
      if (stored.bytes === 0) throw emptyFile();
      return await this.#register(projectId, stored);
    } catch (err) {
      if (stored) await this.deps.blobs.delete(stored.blobKey).catch(() => {});
      throw err;
    }
  }

  async #store(filename: string | undefined, stream: Readable): Promise<StoredUpload> {
    const name = filename?.trim() ? filename.trim() : undefined;
    if (name !== undefined && !name.toLowerCase().endsWith('.jsonl')) throw invalidFileType(name);
    const id = newId('file-');
    const blobKey = blobKeyOfFile(id);
    try {
      const blob = await this.deps.blobs.put(blobKey, stream, { maxBytes: MAX_UPLOAD_BYTES });
      return { id, blobKey, filename: name ?? `${id}.jsonl`, bytes: blob.bytes };
    } catch (err) {
      if (err instanceof BlobTooLargeError) throw fileTooLarge();
      if (err instanceof UploadStreamError) throw invalidMultipart(err.message);
      if (isAppError(err)) throw err;
      throw storageError(err);
    }
  }

  async #register(projectId: string, stored: StoredUpload): Promise<FileRecord> {
    const now = this.deps.clock.nowMs();
    const record: FileRecord = {
      id: stored.id,
      projectId,
      purpose: 'batch',
      filename: stored.filename,
      bytes: stored.bytes,
      blobKey: stored.blobKey,
      isError: false,
      status: 'processed',
      batchId: null,
      createdAtMs: now,
      expiresAtMs: now + FILE_RETENTION_MS,
      deletedAtMs: null,
    };
    await this.deps.files.insert(record);
    return record;
  }

  async retrieve(projectId: string, id: string): Promise<FileRecord> {
    const file = await this.deps.files.findLive(projectId, id, this.deps.clock.nowMs());
    if (!file) throw fileNotFound(id);
    return file;
  }

  list(projectId: string, query: FileListQuery): Promise<Page<FileRecord>> {
    return this.deps.files.list(projectId, query, this.deps.clock.nowMs());
  }

  /** The file's bytes as a stream; 404 when the record or its blob is gone. */
  async openContent(projectId: string, id: string): Promise<{ file: FileRecord; body: Readable }> {
    const file = await this.retrieve(projectId, id);
    try {
      return { file, body: await this.deps.blobs.get(file.blobKey) };
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw fileNotFound(id);
      throw storageError(err);
    }
  }

  async delete(projectId: string, id: string): Promise<{ id: string; object: 'file'; deleted: true }> {
    const file = await this.retrieve(projectId, id);
    if (!(await this.deps.files.softDelete(projectId, id, this.deps.clock.nowMs()))) throw fileNotFound(id);
    await this.collectBlob(file.blobKey);
    return { id, object: 'file', deleted: true };
  }

  /** Deletes a blob once no live record and no unfinished batch needs it. */
  async collectBlob(blobKey: string): Promise<boolean> {
    if (await this.deps.files.blobHasLiveRecord(blobKey, this.deps.clock.nowMs())) return false;
    if (await this.deps.blobInUse(blobKey)) return false;
    try {
      await this.deps.blobs.delete(blobKey);
      // After the delete: a crash in between leaves the record unpurged, and the janitor repeats it.
      await this.deps.files.markBlobPurged(blobKey, this.deps.clock.nowMs());
      return true;
    } catch (err) {
      this.deps.onCollectError?.(blobKey, err);
      return false;
    }
  }

  /**
   * The janitor's pass over deleted and expired records: collects each one's blob unless
   * an unfinished batch still reads it. Returns how many blobs were removed.
   */
  async purgeRetired(limit = 500): Promise<number> {
    const retired = await this.deps.files.retiredUnpurged(this.deps.clock.nowMs(), limit);
    let purged = 0;
    for (const file of retired) {
      if (await this.collectBlob(file.blobKey)) purged += 1;
    }
    return purged;
  }
}
