/**
 * The main-thread side of the ONNX Runtime worker: loads sessions into the worker and
 * runs them by message. One worker per process serves every in-process ONNX model; its
 * intra-op thread pool spreads each run over the cores, and runs queue in the worker.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { ortWorkerMain, type WireFeed, type WireTensor, type WorkerRequest, type WorkerResponse } from './ort-worker.js';

export type { WireTensor, WireFeed } from './ort-worker.js';

export interface OrtRuntimeOptions {
  /** Threads one graph run may use; default: all cores. */
  intraOpThreads?: number;
}

export interface RunOptions {
  fetch?: string[];
  /** output name → key under which the worker keeps it for later runs of the same state. */
  retain?: Record<string, string>;
  state?: string;
}

export interface OrtSession {
  readonly key: string;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, WireFeed>, options?: RunOptions): Promise<Record<string, WireTensor>>;
}

export class OrtRuntimeError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'OrtRuntimeError';
  }
}

type Pending = { resolve: (value: unknown) => void; reject: (err: Error) => void };
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export class OrtRuntime {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextKey = 1;
  private readonly threads: number;
  /** Graph runs finished; exposed for tests and metrics. */
  runs = 0;

  constructor(options: OrtRuntimeOptions = {}) {
    this.threads = options.intraOpThreads ?? Math.max(1, availableParallelism());
  }

  async load(path: string): Promise<OrtSession> {
    const key = `s${this.nextKey++}`;
    const options = {
      intraOpNumThreads: this.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Spinning intra-op threads would steal the cores the event loop needs between runs.
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    };
    const names = (await this.send({ op: 'load', key, path, options })) as { inputNames: string[]; outputNames: string[] };
    return {
      key,
      inputNames: names.inputNames,
      outputNames: names.outputNames,
      run: async (feeds, runOptions = {}) => {
        const result = await this.send({ op: 'run', key, feeds, ...runOptions }, transferables(feeds));
        this.runs++;
        return result as Record<string, WireTensor>;
      },
    };
  }

  async release(session: OrtSession): Promise<void> {
    await this.send({ op: 'release', key: session.key });
  }

  /** Frees the tensors a sequence of runs retained. */
  async dropState(state: string): Promise<void> {
    if (this.worker) await this.send({ op: 'drop-state', state });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const ortPath = createRequire(import.meta.url).resolve('onnxruntime-node');
    // esbuild's keepNames (tsx, vitest) may wrap functions in __name(); define it in the worker.
    const source = `const __name = (f) => f;\n(${ortWorkerMain.toString()})();`;
    const worker = new Worker(source, { eval: true, workerData: { ortPath } });
    worker.unref();
    worker.on('message', (msg: WorkerResponse) => {
      const pending = this.pending.get(msg.id);
      if (!pending) return;
      this.pending.delete(msg.id);
      if (msg.ok) pending.resolve(msg.result);
      else pending.reject(new OrtRuntimeError(msg.error, msg.code));
    });
    worker.on('error', (err) => this.failAll(err));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(new Error(`ONNX Runtime worker exited (code ${code})`));
    });
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    for (const pending of this.pending.values()) pending.reject(err);
    this.pending.clear();
  }

  private send(request: WithoutId<WorkerRequest>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id }, transfer);
    }).finally(() => {
      // An idle worker must not keep the process alive.
      if (this.pending.size === 0) this.worker?.unref();
    });
  }
}

function transferables(feeds: Record<string, WireFeed>): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  for (const feed of Object.values(feeds)) {
    // Only whole, unshared buffers move; a view into a pooled Buffer would detach its neighbours.
    if (!('data' in feed)) continue;
    const { buffer, byteOffset, byteLength } = feed.data;
    if (buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength) seen.add(buffer);
  }
  return [...seen];
}
