/**
 * One ONNX Runtime worker thread as the runtime sees it (ort-runtime.ts): started on first
 * use, messages matched to their answers by id, restarted empty if it dies, and never
 * keeping the process alive while idle.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ortWorkerMain, type WorkerRequest, type WorkerResponse } from './ort-worker.js';

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

/** One worker thread: started on first use, restarted (empty) if it dies. */
export class WorkerSlot {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Procedures defined so far (sent again to a restarted worker). */
  readonly defined = new Set<string>();
  /** Sessions loaded here (for placement). */
  sessions = 0;

  constructor(
    readonly index: number,
    private readonly onExit: (slot: WorkerSlot) => void,
  ) {}

  /** Messages in flight: how busy the worker is. */
  get busy(): number {
    return this.pending.size;
  }

  get started(): boolean {
    return this.worker !== null;
  }

  send(request: WithoutId<WorkerRequest>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    const worker = this.ensure();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      try {
        // Not `{ ...request, id }`: on Node 20 a literal that spreads and then adds a property takes V8's slow path.
        worker.postMessage(Object.assign({ id }, request), transfer);
      } catch (err) {
        // e.g. a tensor whose buffer an earlier run moved to a worker (detached).
        this.pending.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    }).finally(() => {
      // An idle worker must not keep the process alive.
      if (this.pending.size === 0) this.worker?.unref();
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.defined.clear();
    this.sessions = 0;
    if (worker) await worker.terminate();
    this.failAll(new Error('the ONNX Runtime was closed'));
  }

  private ensure(): Worker {
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
      if (this.worker !== worker) return; // closed on purpose: close() answers its callers
      this.failAll(new Error(`ONNX Runtime worker exited (code ${code})`));
      this.worker = null;
      this.defined.clear();
      this.sessions = 0;
      this.onExit(this);
    });
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    for (const pending of this.pending.values()) pending.reject(err);
    this.pending.clear();
  }
}
