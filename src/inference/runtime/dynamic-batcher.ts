/**
 * Dynamic batching: concurrent calls are coalesced into runtime calls of at most
 * `maxBatch` items, up to `concurrency` of them in flight (one per session replica).
 * When the queue holds more than a batch, the items nearest in length to the oldest one
 * go together (less padding, and no item starves).
 *
 * Batch formation adapts to a closed loop of clients: the callers a batch answers come
 * back one by one, so a runtime that frees up waits until the queue holds as many items
 * as the last batch that finished (its callers' return; never more than `fullEnough`),
 * or at most `maxWaitMs`, instead of taking the first arrival alone and alternating tiny
 * and large batches. The target follows the load: after a partial batch it is that
 * batch's size, so once load drops a lone request runs at once again. A lone request on
 * an idle runtime never waits.
 */
export interface DynamicBatcherOptions<I, O> {
  /** Runs one batch; must return one output per input, in order. */
  run: (items: I[]) => Promise<O[]>;
  /** Sort key (e.g. token count); items of similar length share a batch. */
  lengthOf: (item: I) => number;
  maxBatch: number;
  /** Longest a free runtime waits for a batch to reach its target size. */
  maxWaitMs: number;
  /**
   * A batch this large already runs at about the per-item cost of the largest ones, so a
   * free runtime never waits for more (default 8: a MiniLM-sized encoder on one thread
   * costs 7.1 ms a sentence in batches of 8 and 7.05 in batches of 32).
   */
  fullEnough?: number;
  /** Batches allowed in flight at once. */
  concurrency?: number;
  /** Called with the size of every batch started (metrics). */
  onBatch?: (size: number) => void;
  /** Timer functions (tests drive them by hand). */
  timers?: BatcherTimers;
}

export interface BatcherTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const DEFAULT_FULL_ENOUGH = 8;

const REAL_TIMERS: BatcherTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

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
  private timer: unknown = null;
  /** The wait for a fuller batch ran out: dispatch what is queued. */
  private waited = false;
  /** How many items the next batch waits for: the size of the batch that finished last. */
  private target = 1;
  private readonly timers: BatcherTimers;
  readonly stats: BatcherStats = { batches: 0, items: 0, largestBatch: 0 };

  constructor(private readonly options: DynamicBatcherOptions<I, O>) {
    this.timers = options.timers ?? REAL_TIMERS;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Queues every item before dispatching, so one call's inputs can share (or split evenly over) idle replicas. */
  submitAll(items: readonly I[]): Promise<O[]> {
    const answers = items.map((item) => new Promise<O>((resolve, reject) => this.queue.push({ item, resolve, reject })));
    this.pump();
    return Promise.all(answers);
  }

  /** Items waiting for a runtime slot. */
  get queued(): number {
    return this.queue.length;
  }

  private get concurrency(): number {
    return Math.max(1, this.options.concurrency ?? 1);
  }

  private pump(): void {
    const { maxBatch, maxWaitMs } = this.options;
    while (this.queue.length > 0 && this.inFlight < this.concurrency) {
      const target = Math.min(this.target, maxBatch, this.options.fullEnough ?? DEFAULT_FULL_ENOUGH);
      if (this.queue.length < target && !this.waited && maxWaitMs > 0) {
        this.timer ??= this.timers.set(() => {
          this.timer = null;
          this.waited = true;
          this.pump();
        }, maxWaitMs);
        return;
      }
      // Free slots share what is queued when each part still reaches the target.
      const free = this.concurrency - this.inFlight;
      const parts = Math.max(1, Math.min(free, Math.floor(this.queue.length / Math.max(1, target))));
      const size = Math.min(maxBatch, Math.ceil(this.queue.length / parts));
      this.waited = false;
      void this.runBatch(this.takeBatch(size));
    }
    if (this.timer !== null && (this.queue.length === 0 || this.inFlight >= this.concurrency)) {
      this.timers.clear(this.timer);
      this.timer = null;
    }
  }

  /**
   * The next batch: the `size` items nearest in length to the oldest queued item,
   * oldest included, so similar lengths share a batch and no item can starve.
   */
  private takeBatch(size: number): Queued<I, O>[] {
    const { lengthOf } = this.options;
    if (this.queue.length <= size) return this.queue.splice(0);
    const oldest = this.queue[0]!;
    const sorted = [...this.queue].sort((a, b) => lengthOf(a.item) - lengthOf(b.item));
    const at = sorted.indexOf(oldest);
    const start = Math.min(Math.max(0, at - Math.floor(size / 2)), sorted.length - size);
    const batch = sorted.slice(start, start + size);
    const taken = new Set(batch);
    this.queue = this.queue.filter((q) => !taken.has(q));
    return batch;
  }

  private async runBatch(batch: Queued<I, O>[]): Promise<void> {
    this.inFlight++;
    this.stats.batches++;
    this.stats.items += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    this.options.onBatch?.(batch.length);
    try {
      const outputs = await this.options.run(batch.map((q) => q.item));
      batch.forEach((q, i) => q.resolve(outputs[i]!));
    } catch (err) {
      for (const q of batch) q.reject(err);
    } finally {
      this.inFlight--;
      // Its callers are coming back: the next batch waits for as many.
      this.target = batch.length;
      this.pump();
    }
  }
}
