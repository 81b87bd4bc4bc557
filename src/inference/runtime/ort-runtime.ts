/**
 * The main-thread side of the ONNX Runtime workers: loads sessions into worker threads
 * and runs them by message. A process has one runtime and a small pool of workers (one
 * per core by default); each worker runs one graph at a time, so runs on different
 * workers proceed in parallel.
 *
 * Two ways to use the cores, chosen per session:
 * - replicas: copies of one session on distinct workers, each single-threaded; callers
 *   with independent work (batches of embeddings) run side by side. Nothing waits for a
 *   straggling thread, so a busy event loop or a neighbour's process slows one run, not
 *   every kernel of every run.
 * - intra-op threads: one run spreads its kernels over the cores (a speech model
 *   decoding one stream). The threads spin between the kernels of a run (briefly), and
 *   stop spinning when it ends, so the event loop gets its core back between runs.
 */
import { availableParallelism } from 'node:os';
import { onAbort } from '../../domain/shared/abort.js';
import type { WireFeed, WireTensor, WorkerProcedure } from './ort-worker.js';
import { OrtRuntimeError, WorkerSlot } from './worker-slot.js';

export type { WireTensor, WireFeed, WorkerContext, WorkerProcedure, ProcedureResult } from './ort-worker.js';
export { OrtRuntimeError };

export interface OrtRuntimeOptions {
  /** Worker threads (runs in parallel); default: one per core. */
  workers?: number;
  /** Threads one run may use, for sessions that do not set their own; default: all cores. */
  intraOpThreads?: number;
}

export interface SessionOptions {
  /** Copies of the session on distinct workers (at most one per worker); default 1. */
  replicas?: number;
  /** Threads one run may use; default 1 when replicated, else the runtime's default. */
  intraOpThreads?: number;
  /** On the worker(s) of this session: runs of both can share retained state. */
  colocateWith?: OrtSession;
}

export interface RunOptions {
  fetch?: string[];
  /** output name → key under which the worker keeps it for later runs of the same state. */
  retain?: Record<string, string>;
  state?: string;
}

export interface CallOptions {
  /** The call runs on a worker holding this session (the least busy replica). */
  session: OrtSession;
  /** Pins the call to the worker that holds this state (and pins the state on first use). */
  state?: string;
  /** Cancels the call between the steps the procedure checks (ctx.cancelled()). */
  signal?: AbortSignal;
  transfer?: ArrayBuffer[];
}

export interface OrtSession {
  readonly key: string;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Copies loaded; runs of one session may proceed this many at a time. */
  readonly replicas: number;
  run(feeds: Record<string, WireFeed>, options?: RunOptions): Promise<Record<string, WireTensor>>;
}

interface SessionRecord {
  session: OrtSession;
  slots: WorkerSlot[];
}

export class OrtRuntime {
  private readonly slots: WorkerSlot[];
  private readonly sessions = new Map<string, SessionRecord>();
  /** state → the worker that holds its retained tensors. */
  private readonly stateSlots = new Map<string, WorkerSlot>();
  private readonly procedures = new Map<string, string>();
  private nextKey = 1;
  readonly cores: number;
  private readonly defaultThreads: number;
  /** Graph runs and procedure calls finished; exposed for tests and metrics. */
  runs = 0;

  constructor(options: OrtRuntimeOptions = {}) {
    this.cores = Math.max(1, availableParallelism());
    this.defaultThreads = Math.max(1, options.intraOpThreads ?? this.cores);
    const workers = Math.max(1, options.workers ?? this.cores);
    this.slots = Array.from({ length: workers }, (_, i) => new WorkerSlot(i, (slot) => this.forget(slot)));
  }

  /** Worker threads in the pool (started or not). */
  get workers(): number {
    return this.slots.length;
  }

  /** Per worker: started, sessions loaded, messages in flight (tests, diagnostics). */
  workerStats(): { started: boolean; sessions: number; busy: number }[] {
    return this.slots.map((slot) => ({ started: slot.started, sessions: slot.sessions, busy: slot.busy }));
  }

  async load(path: string, options: SessionOptions = {}): Promise<OrtSession> {
    const key = `s${this.nextKey++}`;
    const replicas = Math.min(this.slots.length, Math.max(1, options.replicas ?? 1));
    const threads = Math.max(1, options.intraOpThreads ?? (replicas > 1 ? 1 : this.defaultThreads));
    const slots = options.colocateWith ? this.slotsOf(options.colocateWith) : this.place(replicas);
    const spin = threads > 1 ? '1' : '0';
    const sessionOptions = {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      extra: {
        session: {
          // Between the kernels of one run, idle threads spin briefly before they
          // sleep (kernels of a decoder step follow one another within that; a longer spin
          // only burns a core other processes want); when the run ends they stop at once,
          // leaving the cores to the event loop.
          intra_op: { allow_spinning: spin, spin_duration_us: '200', spin_backoff_max: '8' },
          inter_op: { allow_spinning: '0' },
          force_spinning_stop: '1',
        },
      },
    };
    for (const slot of slots) slot.sessions++;
    let names: { inputNames: string[]; outputNames: string[] };
    try {
      const loaded = await Promise.all(slots.map((slot) => slot.send({ op: 'load', key, path, options: sessionOptions })));
      names = loaded[0] as typeof names;
    } catch (err) {
      for (const slot of slots) slot.sessions--;
      await Promise.allSettled(slots.map((slot) => (slot.started ? slot.send({ op: 'release', key }) : null)));
      throw err;
    }
    const session: OrtSession = {
      key,
      inputNames: names.inputNames,
      outputNames: names.outputNames,
      replicas: slots.length,
      run: async (feeds, runOptions = {}) => {
        const slot = this.slotFor(key, runOptions.state);
        const result = await slot.send({ op: 'run', key, feeds, ...runOptions }, transferables(Object.values(feeds)));
        this.runs++;
        return result as Record<string, WireTensor>;
      },
    };
    this.sessions.set(key, { session, slots });
    return session;
  }

  async release(session: OrtSession): Promise<void> {
    const record = this.sessions.get(session.key);
    if (!record) return;
    this.sessions.delete(session.key);
    await Promise.all(
      record.slots.map(async (slot) => {
        slot.sessions = Math.max(0, slot.sessions - 1);
        if (slot.started) await slot.send({ op: 'release', key: session.key });
      }),
    );
  }

  /**
   * Makes a procedure callable by name in every worker. `procedure` must be
   * self-contained; `helpers` are named function declarations its body may call.
   */
  define<A>(name: string, procedure: WorkerProcedure<A>, helpers: readonly ((...args: never[]) => unknown)[] = []): void {
    const body = `${helpers.map((f) => f.toString()).join('\n')}\nreturn (${procedure.toString()});`;
    const existing = this.procedures.get(name);
    if (existing !== undefined && existing !== body) throw new Error(`procedure ${name} is already defined differently`);
    this.procedures.set(name, body);
  }

  /** Runs a defined procedure on a worker holding `options.session`. */
  async call<R>(name: string, args: unknown, options: CallOptions): Promise<R> {
    const source = this.procedures.get(name);
    if (source === undefined) throw new Error(`procedure ${name} is not defined`);
    const slot = this.slotFor(options.session.key, options.state);
    if (!slot.defined.has(name)) {
      slot.defined.add(name);
      await slot.send({ op: 'define', name, source }).catch((err: unknown) => {
        slot.defined.delete(name);
        throw err;
      });
    }
    let cancel: Int32Array | undefined;
    let stopListening: (() => void) | undefined;
    if (options.signal) {
      const flag = (cancel = new Int32Array(new SharedArrayBuffer(4)));
      stopListening = onAbort(options.signal, () => Atomics.store(flag, 0, 1));
    }
    try {
      const transfer = (options.transfer ?? []).filter((buffer) => buffer.byteLength > 0);
      const result = await slot.send({ op: 'call', name, args, ...(cancel ? { cancel } : {}) }, transfer);
      this.runs++;
      return result as R;
    } finally {
      stopListening?.();
    }
  }

  /** Frees the tensors a sequence of runs retained. */
  async dropState(state: string): Promise<void> {
    const slot = this.stateSlots.get(state);
    this.stateSlots.delete(state);
    if (slot?.started) await slot.send({ op: 'drop-state', state });
  }

  async close(): Promise<void> {
    this.sessions.clear();
    this.stateSlots.clear();
    await Promise.all(this.slots.map((slot) => slot.close()));
  }

  /** The `count` workers with the fewest sessions (lowest index first on ties). */
  private place(count: number): WorkerSlot[] {
    return [...this.slots].sort((a, b) => a.sessions - b.sessions || a.index - b.index).slice(0, count);
  }

  private slotsOf(session: OrtSession): WorkerSlot[] {
    const record = this.sessions.get(session.key);
    if (!record) throw new OrtRuntimeError(`session ${session.key} is not loaded`, 'not_loaded');
    return record.slots;
  }

  /** The state's worker, or the least busy worker holding the session (which then holds the state). */
  private slotFor(key: string, state: string | undefined): WorkerSlot {
    const record = this.sessions.get(key);
    if (!record) throw new OrtRuntimeError(`session ${key} is not loaded`, 'not_loaded');
    const pinned = state ? this.stateSlots.get(state) : undefined;
    if (pinned) {
      if (!record.slots.includes(pinned)) throw new OrtRuntimeError(`session ${key} is not on the worker of state ${state}`, 'not_loaded');
      return pinned;
    }
    let best = record.slots[0]!;
    for (const slot of record.slots) if (slot.busy < best.busy) best = slot;
    if (state) this.stateSlots.set(state, best);
    return best;
  }

  /** A worker died: its sessions and states are gone with it. */
  private forget(slot: WorkerSlot): void {
    for (const [key, record] of this.sessions) if (record.slots.includes(slot)) this.sessions.delete(key);
    for (const [state, holder] of this.stateSlots) if (holder === slot) this.stateSlots.delete(state);
  }
}

/**
 * Whole, unshared, non-empty buffers of the given tensors: a view into a pooled Buffer
 * would detach its neighbours, and a detached buffer in a transfer list makes
 * postMessage drop the message silently (left out, it is refused with an error instead).
 */
export function transferables(values: Iterable<unknown>): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  for (const value of values) {
    if (!value || typeof value !== 'object' || !('data' in value)) continue;
    const data = (value as { data: unknown }).data;
    if (!ArrayBuffer.isView(data)) continue;
    const { buffer, byteOffset, byteLength } = data;
    if (buffer instanceof ArrayBuffer && byteLength > 0 && byteOffset === 0 && byteLength === buffer.byteLength) seen.add(buffer);
  }
  return [...seen];
}
