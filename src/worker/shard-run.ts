/**
 * One leased shard: reads its byte range of the input, skips lines that already have a
 * result (a resumed shard never re-runs or re-bills them), and dispatches the rest
 * within the batch's and the process's concurrency. Lines of a cancelled or expired
 * batch are written without waiting for a slot. The shard is marked done only when
 * every one of its lines has a result; otherwise its lease is released for another run.
 */
import type { Logger } from 'pino';
import { isTerminal, MAX_LINE_BYTES, type BatchRunInfo, type LineGate, type Shard } from '../domain/batches/batch.types.js';
import { inputObjectMissing } from '../domain/batches/batch-input.js';
import { splitJsonlLines } from '../domain/batches/jsonl-lines.js';
import type { Clock } from '../domain/shared/clock.js';
import { BlobNotFoundError, type BlobStore } from '../domain/files/blob-store.port.js';
import type { BatchesService } from '../domain/batches/batches.service.js';
import type { BatchLineResultStore, BatchRunStore, BatchShardStore } from '../domain/batches/batch-stores.port.js';
import { gateFailure, type LineExecutor, type LineTask } from './line-executor.js';
import type { Semaphore } from './semaphore.js';

export interface ShardRunDeps {
  owner: string;
  batches: BatchRunStore;
  /** Status transitions (the batches service). */
  lifecycle: BatchesService;
  shards: BatchShardStore;
  results: BatchLineResultStore;
  blobs: BlobStore;
  executor: LineExecutor;
  clock: Clock;
  logger: Logger;
  globalSlots: Semaphore;
  batchSlots: Semaphore;
  /** True once the runner is draining. */
  stopping(): boolean;
  signal: AbortSignal;
}

/** How stale the cached batch state may be when deciding to short-circuit a line. */
const GATE_TTL_MS = 200;

export class ShardRun {
  #lost = false;
  #gate: { value: LineGate | undefined; readAtMs: number } = { value: undefined, readAtMs: -Infinity };
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    readonly shard: Shard,
    private readonly deps: ShardRunDeps,
  ) {}

  /** The lease went to another worker: dispatch nothing more. */
  markLost(): void {
    this.#lost = true;
  }

  async run(): Promise<'done' | 'released'> {
    const { shard, deps } = this;
    const batch = await deps.batches.runInfo(shard.batchId);
    if (batch) {
      if (batch.status === 'validating') await deps.lifecycle.startRun(batch.id);
      const done = await deps.results.doneLines(batch.id, shard.firstLine, shard.lastLine);
      try {
        if (done.size < shard.lineCount) await this.#dispatchAll(batch, done);
      } catch (err) {
        if (!(err instanceof BlobNotFoundError)) throw err;
        // The input's stored object vanished (removed outside Sluice): no line can be read.
        const message = inputObjectMissing(batch.inputFileId).message;
        await deps.lifecycle.failRun(batch.id, [{ code: 'file_object_missing', message, line: null, param: null }]);
      }
    }
    const recorded = await deps.results.countInRange(shard.batchId, shard.firstLine, shard.lastLine);
    if (recorded >= shard.lineCount) {
      await deps.shards.markDone(shard.id);
      return 'done';
    }
    await deps.shards.release(deps.owner, shard.id);
    return 'released';
  }

  #halted(): boolean {
    return this.#lost || this.deps.stopping();
  }

  async #dispatchAll(batch: BatchRunInfo, done: Set<number>): Promise<void> {
    const { shard, deps } = this;
    const stream = await deps.blobs.get(batch.inputBlobKey, { start: shard.startByte, end: shard.endByte - 1 });
    try {
      const lines = splitJsonlLines(stream, { maxLineBytes: MAX_LINE_BYTES, firstLineNo: shard.firstLine, startOffset: shard.startByte });
      for await (const line of lines) {
        if (line.blank || line.oversize || done.has(line.no)) continue;
        if (this.#halted()) break;
        const lineText = line.bytes.toString('utf8');
        const parsed = JSON.parse(lineText) as { custom_id: string; body: unknown };
        const task: LineTask = { batch, lineNo: line.no, customId: parsed.custom_id, body: parsed.body, lineText };
        const gate = await this.#cachedGate();
        if (!gate || isTerminal(gate.status)) break;
        // Only cancellation and expiry short-circuit here; the key is checked fresh per line.
        const blocked = gateFailure({ ...gate, keyRevoked: false }, deps.clock.nowMs());
        if (blocked) {
          await deps.executor.recordFailure(task, blocked);
          continue;
        }
        if (!(await this.#acquire())) break;
        this.#track(task);
      }
    } finally {
      stream.destroy();
      await Promise.allSettled(this.#inFlight);
    }
  }

  async #acquire(): Promise<boolean> {
    await this.deps.batchSlots.acquire();
    await this.deps.globalSlots.acquire();
    if (!this.#halted()) return true;
    this.#releaseSlots();
    return false;
  }

  #releaseSlots(): void {
    this.deps.globalSlots.release();
    this.deps.batchSlots.release();
  }

  #track(task: LineTask): void {
    const running = this.deps.executor
      .run(task, this.deps.signal)
      .catch((err: unknown) => {
        // The line stays unrecorded; the shard is released and the line runs again later.
        if (!this.deps.signal.aborted) this.deps.logger.error({ err, batchId: task.batch.id, line: task.lineNo }, 'batch line failed to record');
      })
      .finally(() => {
        this.#releaseSlots();
        this.#inFlight.delete(running);
      });
    this.#inFlight.add(running);
  }

  async #cachedGate(): Promise<LineGate | undefined> {
    const now = this.deps.clock.nowMs();
    if (now - this.#gate.readAtMs > GATE_TTL_MS) {
      this.#gate = { value: await this.deps.batches.lineGate(this.shard.batchId), readAtMs: now };
    }
    return this.#gate.value;
  }
}
