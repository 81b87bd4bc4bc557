/**
 * Ends batches whose every line has a result: streams the recorded lines, in input
 * order, into the output and error blobs, then in one transaction moves the batch to
 * its terminal status and registers the files. Idempotent: blob keys derive from the
 * batch id (a retry overwrites them atomically) and the terminal UPDATE is conditional,
 * so a finalizer that dies half-way is simply repeated by the next lease holder.
 */
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { outputFileRecord, type FilesService } from '../domain/files/files.service.js';
import type { FileRecord } from '../domain/files/files.types.js';
import type { BatchRecord } from '../domain/batches/batch.types.js';
import type { Clock } from '../domain/shared/clock.js';
import { newId } from '../domain/shared/ids.js';
import type { BlobStore } from '../domain/files/blob-store.port.js';
import type { BatchesService } from '../domain/batches/batches.service.js';
import type {
  BatchFinalizationLeaseStore,
  BatchLineResultStore,
  BatchRunStore,
  TerminalPatch,
} from '../domain/batches/batch-stores.port.js';

export interface BatchFinalizerDeps {
  owner: string;
  batches: BatchRunStore;
  /** Status transitions (the batches service). */
  lifecycle: BatchesService;
  finalization: BatchFinalizationLeaseStore;
  results: BatchLineResultStore;
  files: FilesService;
  blobs: BlobStore;
  clock: Clock;
  logger: Logger;
  leaseMs: number;
}

const CHUNK_BYTES = 64 * 1024;

/** Joins lines into ~64 KB buffers, so a large file is a few thousand writes, not one per line. */
async function* jsonlChunks(lines: AsyncIterable<string>): AsyncGenerator<Buffer> {
  let parts: string[] = [];
  let size = 0;
  for await (const line of lines) {
    parts.push(line, '\n');
    size += line.length + 1;
    if (size >= CHUNK_BYTES) {
      yield Buffer.from(parts.join(''));
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield Buffer.from(parts.join(''));
}

export class BatchFinalizer {
  constructor(private readonly deps: BatchFinalizerDeps) {}

  /** Finalizes what is ready; returns how many batches this call ended. */
  async finalizeReady(): Promise<number> {
    const ids = await this.deps.finalization.ready(this.deps.clock.nowMs(), 4);
    let ended = 0;
    for (const id of ids) {
      try {
        if (await this.finalize(id)) ended += 1;
      } catch (err) {
        this.deps.logger.error({ err, batchId: id }, 'batch finalization failed; it will be retried');
        await this.deps.finalization.release(id, this.deps.owner).catch(() => {});
      }
    }
    return ended;
  }

  async finalize(id: string): Promise<boolean> {
    const { deps } = this;
    const claimed = await deps.finalization.claim(id, deps.owner, deps.clock.nowMs(), deps.leaseMs);
    if (!claimed) return false;
    const renewal = setInterval(() => {
      deps.finalization.renew(id, deps.owner, deps.clock.nowMs(), deps.leaseMs).catch(() => {});
    }, Math.max(100, deps.leaseMs / 3));
    try {
      if (claimed === 'in_progress') await deps.lifecycle.beginFinalizing(id);
      const batch = await deps.batches.find(id);
      if (!batch || (batch.status !== 'finalizing' && batch.status !== 'cancelling')) {
        await deps.finalization.release(id, deps.owner);
        return false;
      }
      return await this.#finish(batch);
    } finally {
      clearInterval(renewal);
    }
  }

  async #finish(batch: BatchRecord): Promise<boolean> {
    const { deps } = this;
    const target = await this.#targetOf(batch);
    const counts = (await deps.results.counts([batch.id])).get(batch.id) ?? { completed: 0, failed: 0 };
    const now = deps.clock.nowMs();
    const output = counts.completed > 0 ? await this.#writeFile(batch, false, now) : null;
    const errors = counts.failed > 0 ? await this.#writeFile(batch, true, now) : null;
    const patch: TerminalPatch = {
      status: target,
      atMs: now,
      counts: { total: batch.requestCounts.total, ...counts },
      outputFileId: output?.id ?? null,
      errorFileId: errors?.id ?? null,
    };
    const files = [output, errors].filter((f): f is FileRecord => f !== null);
    if (!(await deps.lifecycle.finish(batch.id, deps.owner, batch.status, patch, files))) {
      await deps.finalization.release(batch.id, deps.owner);
      return false;
    }
    deps.logger.info({ batchId: batch.id, status: target, ...counts }, 'batch ended');
    // The input may have been deleted while this batch read it; its blob can go now.
    if (batch.inputBlobKey) await deps.files.collectBlob(batch.inputBlobKey);
    return true;
  }

  async #targetOf(batch: BatchRecord): Promise<TerminalPatch['status']> {
    if (batch.status === 'cancelling') return 'cancelled';
    return (await this.deps.results.hasErrorCode(batch.id, 'batch_expired')) ? 'expired' : 'completed';
  }

  async #writeFile(batch: BatchRecord, isError: boolean, nowMs: number): Promise<FileRecord> {
    const kind = isError ? 'error' : 'output';
    const blobKey = `batches/${batch.id}/${kind}.jsonl`;
    const body = Readable.from(jsonlChunks(this.deps.results.lines(batch.id, !isError)));
    const blob = await this.deps.blobs.put(blobKey, body);
    return outputFileRecord({
      id: newId('file-'),
      projectId: batch.projectId,
      batchId: batch.id,
      filename: `${batch.id}_${kind}.jsonl`,
      blobKey,
      bytes: blob.bytes,
      isError,
      createdAtMs: nowMs,
      // output_expires_after: anchored at the file's creation, as OpenAI's is.
      expiresAfterMs: batch.outputExpiresAfterSeconds === null ? undefined : batch.outputExpiresAfterSeconds * 1000,
    });
  }
}
