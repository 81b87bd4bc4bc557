import type { Page } from '../shared/pagination.js';
/** Files: uploads (purpose `batch`) and the outputs batches write (purpose `batch_output`). */
import type { Readable } from 'node:stream';

export type FilePurpose = 'batch' | 'batch_output';
export type FileStatus = 'uploaded' | 'processed' | 'error';

export const FILE_PURPOSES: readonly FilePurpose[] = ['batch', 'batch_output'];

/** Largest upload, in bytes (100 MB). */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** Uploads and outputs are kept for 30 days. */
export const FILE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** Largest file list page; also the default page size. */
export const MAX_FILE_PAGE = 10_000;

export interface FileRecord {
  id: string;
  projectId: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  blobKey: string;
  /** True only on a batch's error file. */
  isError: boolean;
  status: FileStatus;
  /** The batch that wrote this file (outputs only). */
  batchId: string | null;
  createdAtMs: number;
  expiresAtMs: number | null;
  deletedAtMs: number | null;
}

export interface FileListQuery {
  purpose?: FilePurpose;
  order: 'asc' | 'desc';
  after?: string;
  limit: number;
}

/** One part of a multipart upload, in the order the client sent them. */
export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string | undefined; stream: Readable };

/**
 * The client's upload stream broke (truncated or malformed multipart), as opposed to a
 * storage failure; the HTTP adapter raises it so the service can answer 400, not 500.
 */
export class UploadStreamError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UploadStreamError';
  }
}

/** A deleted or expired record whose blob may still be on storage. */
export interface RetiredFile {
  id: string;
  blobKey: string;
}

/** The store the files service needs; FilesRepository implements it. */
export interface FileStore {
  insert(file: FileRecord): Promise<void>;
  /** Hides soft-deleted and expired records. */
  findLive(projectId: string, id: string, nowMs: number): Promise<FileRecord | undefined>;
  list(projectId: string, query: FileListQuery, nowMs: number): Promise<Page<FileRecord>>;
  softDelete(projectId: string, id: string, nowMs: number): Promise<boolean>;
  blobHasLiveRecord(blobKey: string, nowMs: number): Promise<boolean>;
  retiredUnpurged(nowMs: number, limit: number): Promise<RetiredFile[]>;
  markBlobPurged(blobKey: string, nowMs: number): Promise<void>;
}
