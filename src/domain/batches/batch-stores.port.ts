/** The stores the batches service needs; the repositories in src/storage/db implement them. */
import type { Page } from '../shared/pagination.js';
import type { FileRecord } from '../files/files.types.js';
import type { BatchError, BatchRecord, BatchStatus, BatchUsage, RequestCounts, ShardPlan } from './batch.types.js';

/** A batch the validation sweep ended, with the input blob it may have been keeping alive. */
export interface SweptBatch {
  id: string;
  status: 'failed' | 'cancelled';
  inputBlobKey: string | null;
}

/** What ending a batch writes: its terminal status, when, its counts and its files. */
export interface TerminalPatch {
  status: Extract<BatchStatus, 'completed' | 'expired' | 'cancelled'>;
  atMs: number;
  counts: RequestCounts;
  outputFileId: string | null;
  errorFileId: string | null;
}

export interface ResultCounts {
  completed: number;
  failed: number;
}

export interface BatchStore {
  insert(batch: BatchRecord): Promise<void>;
  find(id: string): Promise<BatchRecord | undefined>;
  findForProject(projectId: string, id: string): Promise<BatchRecord | undefined>;
  listByProject(projectId: string, limit: number, after?: string): Promise<Page<BatchRecord>>;
  setInputBlob(id: string, blobKey: string): Promise<void>;
  /** Plans the shards and records the lines' model; false when the batch is no longer validating. */
  markValidated(id: string, totalLines: number, shards: readonly ShardPlan[], model?: string | null): Promise<boolean>;
  heartbeatValidation(id: string, nowMs: number): Promise<boolean>;
  sweepInterruptedValidations(staleBeforeMs: number, nowMs: number, errors: readonly BatchError[]): Promise<SweptBatch[]>;
  markFailed(id: string, errors: readonly BatchError[], nowMs: number): Promise<void>;
  requestCancel(projectId: string, id: string, nowMs: number): Promise<boolean>;
  markInProgress(id: string, nowMs: number): Promise<void>;
}

export interface BatchResultCounts {
  counts(batchIds: readonly string[]): Promise<Map<string, ResultCounts>>;
  /** The usage of the recorded lines of each batch (absent: none recorded). */
  usageOf(batchIds: readonly string[]): Promise<Map<string, BatchUsage>>;
}

export interface BatchFinalizationStore {
  markFinalizing(id: string, nowMs: number): Promise<void>;
  /** Ends the batch held by `owner` (from status `from`) with its files and its lines' usage, in one transaction. */
  finish(id: string, owner: string, from: BatchStatus, patch: TerminalPatch, files: readonly FileRecord[]): Promise<boolean>;
}
