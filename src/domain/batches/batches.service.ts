/**
 * Batches: creation (the whole input streamed and validated before the answer),
 * retrieval with live counts, listing and cancellation. Execution belongs to the runner
 * (src/worker); this service only plans the shards it will lease.
 */
import { BlobNotFoundError, type BlobStore } from '../files/blob-store.port.js';
import type { BatchFinalizationStore, BatchResultCounts, BatchStore, SweptBatch, TerminalPatch } from './batch-stores.port.js';
import type { FileRecord } from '../files/files.types.js';
import type { FileStore } from '../files/files.types.js';
import { payerRef, type Principal } from '../identity/caller.js';
import type { Clock } from '../shared/clock.js';
import { AppError, isAppError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Page } from '../shared/pagination.js';
import { storageError } from '../files/files.errors.js';
import {
  batchInvalid,
  endpointNotServed,
  inputFileNotFound,
  inputObjectMissing,
  inputTooLarge,
  noLines,
  parseCreateBody,
  VALIDATION_INTERRUPTED,
  validationInterrupted,
} from './batch-input.js';
import { validateBatchInput } from './batch-validator.js';
import { isTerminal, MAX_INPUT_BYTES, NO_USAGE, type BatchError, type BatchRecord } from './batch.types.js';

export interface BatchesServiceDeps {
  batches: BatchStore;
  results: BatchResultCounts;
  finalization: BatchFinalizationStore;
  files: FileStore;
  blobs: BlobStore;
  clock: Clock;
  completionWindowSeconds: number;
  shardLines: number;
  /** The endpoints a batch may use (`batches.endpoints`). */
  endpoints: ReadonlySet<string>;
  /** Whether any model here serves an allowed endpoint; a batch on one that none serves is refused. */
  served(endpoint: string): boolean;
  /** A batch validating with no heartbeat for this long was abandoned by its creating request. */
  validationTimeoutSeconds: number;
  /** Told when a batch is ready to run, so an in-process runner starts at once. */
  onRunnable?(batchId: string): void;
  /** The W3C traceparent of the active span (the creating request's) when tracing is on; kept with the batch. */
  traceParent?(): string | null;
  /** Deletes a blob no live file and no active batch needs (FilesService.collectBlob). */
  collectBlob(blobKey: string): Promise<unknown>;
}

export const batchNotFound = (id: string) => new AppError('not_found', `Batch not found: ${id}`, { code: 'batch_not_found' });

const batchTerminal = (status: string) =>
  new AppError('conflict', `Batch already terminal: ${status}`, { code: 'batch_terminal' });

/**
 * Passes the input through, refreshing the batch's validation heartbeat every `everyMs`
 * of clock time, so the sweep never takes a long validation for a dead one. Stops with
 * validation_interrupted if the sweep ended the batch anyway (a stall past the timeout).
 */
async function* withHeartbeat(
  source: AsyncIterable<Buffer>,
  everyMs: number,
  clock: Clock,
  beat: (nowMs: number) => Promise<boolean>,
): AsyncGenerator<Buffer> {
  let last = clock.nowMs();
  for await (const chunk of source) {
    const now = clock.nowMs();
    if (now - last >= everyMs) {
      last = now;
      if (!(await beat(now))) throw validationInterrupted();
    }
    yield chunk;
  }
}

const toBatchError = (error: AppError): BatchError => ({
  code: error.code ?? 'invalid_request_error',
  message: error.message,
  line: error.line ?? null,
  param: error.param,
});

export class BatchesService {
  constructor(private readonly deps: BatchesServiceDeps) {}

  /**
   * The batch row is stored first (status `validating`), so a rejected creation is still
   * listed as `failed` with its errors, and a concurrent delete of the input sees that
   * the blob is in use.
   */
  async create(principal: Principal, body: unknown): Promise<BatchRecord> {
    const { input, error } = parseCreateBody(body);
    const now = this.deps.clock.nowMs();
    const batch: BatchRecord = {
      id: newId('batch_'),
      projectId: principal.projectId,
      createdByKeyId: principal.keyId,
      payer: payerRef(principal.payer),
      endpoint: input.endpoint,
      model: null,
      inputFileId: input.inputFileId,
      inputBlobKey: null,
      completionWindow: input.completionWindow,
      outputExpiresAfterSeconds: input.outputExpiresAfterSeconds,
      status: 'validating',
      metadata: input.metadata,
      errors: null,
      requestCounts: { total: 0, completed: 0, failed: 0 },
      usage: NO_USAGE,
      outputFileId: null,
      errorFileId: null,
      createdAtMs: now,
      expiresAtMs: now + this.deps.completionWindowSeconds * 1000,
      inProgressAtMs: null,
      finalizingAtMs: null,
      completedAtMs: null,
      failedAtMs: null,
      expiredAtMs: null,
      cancellingAtMs: null,
      cancelledAtMs: null,
      traceParent: this.deps.traceParent?.() ?? null,
    };
    await this.deps.batches.insert(batch);
    try {
      if (error) throw error;
      if (this.deps.endpoints.has(batch.endpoint) && !this.deps.served(batch.endpoint)) throw endpointNotServed(batch.endpoint);
      const { total, model } = await this.#validateAndPlan(batch);
      this.deps.onRunnable?.(batch.id);
      return { ...batch, model, requestCounts: { total, completed: 0, failed: 0 } };
    } catch (err) {
      const failure = isAppError(err) ? err : storageError(err);
      await this.deps.batches.markFailed(batch.id, [toBatchError(failure)], this.deps.clock.nowMs());
      // The input may have been deleted while it was being validated: its blob is free now.
      const stored = await this.deps.batches.find(batch.id);
      if (stored?.inputBlobKey) await this.deps.collectBlob(stored.inputBlobKey).catch(() => {});
      throw failure;
    }
  }

  async #validateAndPlan(batch: BatchRecord): Promise<{ total: number; model: string | null }> {
    // An expired input is as absent as a deleted one.
    const file = await this.deps.files.findLive(batch.projectId, batch.inputFileId, this.deps.clock.nowMs());
    if (!file) throw inputFileNotFound(batch.inputFileId);
    if (file.purpose !== 'batch') {
      throw batchInvalid(`Input file ${file.id} has purpose "${file.purpose}"; batches read files with purpose "batch"`, {
        param: 'input_file_id',
      });
    }
    await this.deps.batches.setInputBlob(batch.id, file.blobKey);
    const stat = await this.deps.blobs.stat(file.blobKey).catch((err) => Promise.reject(storageError(err)));
    if (!stat) throw inputObjectMissing(file.id);
    if (stat.bytes === 0) throw noLines();
    if (stat.bytes > MAX_INPUT_BYTES) throw inputTooLarge();
    const stream = await this.deps.blobs
      .get(file.blobKey)
      .catch((err) => Promise.reject(err instanceof BlobNotFoundError ? inputObjectMissing(file.id) : storageError(err)));
    const everyMs = (this.deps.validationTimeoutSeconds * 1000) / 4;
    const beat = (nowMs: number) => this.deps.batches.heartbeatValidation(batch.id, nowMs);
    let plan;
    try {
      const input = withHeartbeat(stream, everyMs, this.deps.clock, beat);
      plan = await validateBatchInput(input, { endpoint: batch.endpoint, shardLines: this.deps.shardLines, endpoints: this.deps.endpoints });
    } finally {
      stream.destroy();
    }
    if (!(await this.deps.batches.markValidated(batch.id, plan.totalLines, plan.shards, plan.model))) throw validationInterrupted();
    return { total: plan.totalLines, model: plan.model };
  }

  /**
   * The janitor's sweep: batches whose creating request died mid-validation (no shards,
   * heartbeat older than the timeout) end `failed` with validation_interrupted (or
   * `cancelled` if a cancel was requested meanwhile), and the input blobs they kept alive
   * are collected if nothing else needs them.
   */
  async sweepInterruptedValidations(): Promise<SweptBatch[]> {
    const now = this.deps.clock.nowMs();
    const staleBefore = now - this.deps.validationTimeoutSeconds * 1000;
    const swept = await this.deps.batches.sweepInterruptedValidations(staleBefore, now, [VALIDATION_INTERRUPTED]);
    for (const batch of swept) {
      if (batch.inputBlobKey) await this.deps.collectBlob(batch.inputBlobKey).catch(() => {});
    }
    return swept;
  }

  /** The runner's first shard of a batch: `validating` → `in_progress`. */
  async startRun(id: string): Promise<void> {
    await this.deps.batches.markInProgress(id, this.deps.clock.nowMs());
  }

  /** The runner cannot go on (its input vanished): the batch ends `failed` with `errors`. */
  async failRun(id: string, errors: readonly BatchError[]): Promise<void> {
    await this.deps.batches.markFailed(id, errors, this.deps.clock.nowMs());
  }

  /** Every line is recorded: `in_progress` → `finalizing` (the finalizer holds the batch's lease). */
  async beginFinalizing(id: string): Promise<void> {
    await this.deps.finalization.markFinalizing(id, this.deps.clock.nowMs());
  }

  /**
   * Ends a batch the finalizer `owner` holds: its terminal status, counts and files, in
   * one step; false when the batch moved on meanwhile (the lease was lost).
   */
  finish(id: string, owner: string, from: BatchRecord['status'], patch: TerminalPatch, files: readonly FileRecord[]): Promise<boolean> {
    return this.deps.finalization.finish(id, owner, from, patch, files);
  }

  async retrieve(projectId: string, id: string): Promise<BatchRecord> {
    const batch = await this.deps.batches.findForProject(projectId, id);
    if (!batch) throw batchNotFound(id);
    const [live] = await this.#withLiveCounts([batch]);
    return live!;
  }

  async list(projectId: string, limit: number, after?: string): Promise<Page<BatchRecord>> {
    const page = await this.deps.batches.listByProject(projectId, limit, after);
    return { items: await this.#withLiveCounts(page.items), hasMore: page.hasMore };
  }

  /**
   * validating|in_progress → cancelling (cancelling_at set once); idempotent while
   * cancelling or finalizing; 409 once terminal.
   */
  async cancel(projectId: string, id: string): Promise<BatchRecord> {
    const batch = await this.retrieve(projectId, id);
    if (isTerminal(batch.status)) throw batchTerminal(batch.status);
    if (batch.status === 'validating' || batch.status === 'in_progress') {
      await this.deps.batches.requestCancel(projectId, id, this.deps.clock.nowMs());
      this.deps.onRunnable?.(id);
    }
    const after = await this.retrieve(projectId, id);
    if (isTerminal(after.status) && after.status !== 'cancelled') throw batchTerminal(after.status);
    return after;
  }

  /** Counts and usage of a running batch come from its line results; a finished batch keeps its final ones. */
  async #withLiveCounts(batches: BatchRecord[]): Promise<BatchRecord[]> {
    const running = batches.filter((b) => !isTerminal(b.status)).map((b) => b.id);
    const [counts, usage] = await Promise.all([this.deps.results.counts(running), this.deps.results.usageOf(running)]);
    return batches.map((b) => {
      const live = counts.get(b.id);
      const used = usage.get(b.id);
      return {
        ...b,
        ...(live ? { requestCounts: { total: b.requestCounts.total, ...live } } : {}),
        ...(used ? { usage: used } : {}),
      };
    });
  }
}
