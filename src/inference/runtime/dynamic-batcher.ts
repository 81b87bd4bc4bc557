/**
 * Dynamic batching: concurrent calls are coalesced into one runtime call. While a batch
 * runs, new items queue; when the runtime frees up, the queue is sorted by length (to
 * limit padding) and dispatched in batches of at most `maxBatch`.
 *
 * Under load (the previous batch held more than one item) a runtime that frees up
 * lingers up to `maxWaitMs` for the callers it just answered to come back, so batches
 * stay full instead of alternating between halves; a lone request on an idle runtime
 * is dispatched at once and pays no batching latency.
 */
export interface DynamicBatcherOptions<I, O> {
  /** Runs one batch; must return one output per input, in order. */
  run: (items: I[]) => Promise<O[]>;
  /** Sort key (e.g. token count); items of similar length share a batch. */
  lengthOf: (item: I) => number;
  maxBatch: number;
  maxWaitMs: number;
  /** Batches allowed in flight at once. */
  concurrency?: number;
}

interface Queued<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

export interface BatcherStats {
  /** Runtime calls made (batches). */
  batches: number;
  /** Items processed. */
  items: number;
  largestBatch: number;
}

export class DynamicBatcher<I, O> {
  private queue: Queued<I, O>[] = [];
  private inFlight = 0;
  private lingerTimer: NodeJS.Timeout | null = null;
  private lastBatchSize = 0;
  readonly stats: BatcherStats = { batches: 0, items: 0, largestBatch: 0 };

  constructor(private readonly options: DynamicBatcherOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  submitAll(items: readonly I[]): Promise<O[]> {
    return Promise.all(items.map((item) => this.submit(item)));
  }

  private get concurrency(): number {
    return this.options.concurrency ?? 1;
  }

  private pump(): void {
    if (this.queue.length === 0 || this.inFlight >= this.concurrency) return;
    const full = this.queue.length >= this.options.maxBatch;
    const underLoad = this.lastBatchSize > 1;
    if (!full && underLoad && this.options.maxWaitMs > 0) {
      this.lingerTimer ??= setTimeout(() => {
        this.lingerTimer = null;
        this.dispatch();
      }, this.options.maxWaitMs);
      return;
    }
    this.dispatch();
  }

  private dispatch(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    while (this.queue.length > 0 && this.inFlight < this.concurrency) void this.runBatch(this.takeBatch());
  }

  /**
   * The next batch: the `maxBatch` items nearest in length to the oldest queued item,
   * oldest included, so similar lengths share a batch and no item can starve.
   */
  private takeBatch(): Queued<I, O>[] {
    const { maxBatch, lengthOf } = this.options;
    const oldest = this.queue[0]!;
    if (this.queue.length <= maxBatch) return this.queue.splice(0);
    const sorted = [...this.queue].sort((a, b) => lengthOf(a.item) - lengthOf(b.item));
    const at = sorted.indexOf(oldest);
    const start = Math.min(Math.max(0, at - Math.floor(maxBatch / 2)), sorted.length - maxBatch);
    const batch = sorted.slice(start, start + maxBatch);
    const taken = new Set(batch);
    this.queue = this.queue.filter((q) => !taken.has(q));
    return batch;
  }

  private async runBatch(batch: Queued<I, O>[]): Promise<void> {
    this.inFlight++;
    this.lastBatchSize = batch.length;
    this.stats.batches++;
    this.stats.items += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    try {
      const outputs = await this.options.run(batch.map((q) => q.item));
      batch.forEach((q, i) => q.resolve(outputs[i]!));
    } catch (err) {
      for (const q of batch) q.reject(err);
    } finally {
      this.inFlight--;
      this.pump();
    }
  }
}
