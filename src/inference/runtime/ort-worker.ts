/**
 * The body of an ONNX Runtime worker thread. onnxruntime-node's `session.run()` is
 * synchronous on the calling thread (its promise is a setImmediate wrapper), so every
 * session lives in a worker and the event loop of the server never runs a graph.
 *
 * The function is stringified into an eval'd worker, so it must be self-contained: no
 * imports, no references to module scope. Outputs can be retained in the worker under a
 * key (a decoder's key/value cache) and fed back by reference, so large tensors never
 * cross threads. Procedures (self-contained functions sent as source, see `define`) run
 * whole loops next to the sessions: a decoder's greedy loop, a forward pass plus its
 * pooling, without a message per step.
 */

/** A tensor as it crosses threads: typed array + dims (bool tensors as Uint8Array). */
export interface WireTensor {
  type: 'float32' | 'int64' | 'int32' | 'bool';
  dims: number[];
  data: Float32Array | BigInt64Array | Int32Array | Uint8Array;
}

/** A feed is a tensor, or a reference to one retained by an earlier run of the same state. */
export type WireFeed = WireTensor | { retained: string };

/** What a procedure sees in the worker (ORT objects are untyped across the boundary). */
export interface WorkerContext {
  /** The onnxruntime-node module. */
  ort: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** A loaded session by key; throws code not_loaded when absent. */
  session(key: string): any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The retained tensors of a state (created empty on first use). */
  state(name: string): Map<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  tensor(wire: WireTensor): any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** True once the caller cancelled the call (checked between steps of a loop). */
  cancelled(): boolean;
}

/** A procedure's answer: the result, and buffers to move (not copy) to the caller. */
export interface ProcedureResult {
  result: unknown;
  transfer?: ArrayBuffer[];
}

/**
 * A worker-side procedure. Its source is evaluated in the worker, so it must not refer
 * to anything outside its own body (imports, module constants, other functions) unless
 * that is part of the source it was defined with.
 */
export type WorkerProcedure<A> = (ctx: WorkerContext, args: A) => Promise<ProcedureResult>;

export type WorkerRequest =
  | { op: 'load'; id: number; key: string; path: string; options: Record<string, unknown> }
  | { op: 'release'; id: number; key: string }
  | { op: 'drop-state'; id: number; state: string }
  | {
      op: 'run';
      id: number;
      key: string;
      feeds: Record<string, WireFeed>;
      /** Outputs to send back; default all that are not retained. */
      fetch?: string[];
      /** output name → retained key, stored under `state`. */
      retain?: Record<string, string>;
      state?: string;
    }
  /** `source` is a function body returning the procedure. */
  | { op: 'define'; id: number; name: string; source: string }
  /** `cancel` (optional): an Int32Array on a SharedArrayBuffer; non-zero cancels. */
  | { op: 'call'; id: number; name: string; args: unknown; cancel?: Int32Array };

export type WorkerResponse =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string; code?: string };

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-require-imports */
export function ortWorkerMain(): void {
  const { parentPort, workerData } = require('node:worker_threads');
  const ort = require(workerData.ortPath);
  const sessions = new Map<string, any>();
  const states = new Map<string, Map<string, any>>();
  const procedures = new Map<string, (ctx: any, args: any) => Promise<any>>();

  const toTensor = (t: any) => new ort.Tensor(t.type, t.data, t.dims);
  const fromTensor = (t: any) => ({ type: t.type, dims: Array.from(t.dims), data: t.data });
  const sessionOf = (key: string) => {
    const session = sessions.get(key);
    if (!session) throw Object.assign(new Error(`session ${key} is not loaded`), { code: 'not_loaded' });
    return session;
  };
  const stateOf = (name: string) => {
    let state = states.get(name);
    if (!state) states.set(name, (state = new Map()));
    return state;
  };

  const handlers: Record<string, (msg: any) => Promise<{ result: unknown; transfer?: ArrayBuffer[] }>> = {
    async load(msg) {
      const session = await ort.InferenceSession.create(msg.path, msg.options);
      sessions.set(msg.key, session);
      return { result: { inputNames: session.inputNames, outputNames: session.outputNames } };
    },
    async release(msg) {
      const session = sessions.get(msg.key);
      sessions.delete(msg.key);
      if (session) await session.release();
      return { result: null };
    },
    async 'drop-state'(msg) {
      states.delete(msg.state);
      return { result: null };
    },
    async define(msg) {
      const make = new Function('__name', msg.source);
      // esbuild's keepNames (tsx, vitest) may wrap functions in __name(); it is the identity here.
      procedures.set(msg.name, make((f: unknown) => f));
      return { result: null };
    },
    async call(msg) {
      const procedure = procedures.get(msg.name);
      if (!procedure) throw new Error(`procedure ${msg.name} is not defined`);
      const cancel: Int32Array | undefined = msg.cancel;
      const ctx = {
        ort,
        session: sessionOf,
        state: stateOf,
        tensor: toTensor,
        cancelled: () => (cancel ? Atomics.load(cancel, 0) !== 0 : false),
      };
      return procedure(ctx, msg.args);
    },
    async run(msg) {
      const session = sessionOf(msg.key);
      const state = msg.state ? stateOf(msg.state) : new Map();
      const feeds: Record<string, any> = {};
      for (const [name, feed] of Object.entries<any>(msg.feeds)) {
        if (feed.retained === undefined) feeds[name] = toTensor(feed);
        else if (state.has(feed.retained)) feeds[name] = state.get(feed.retained);
        else throw new Error(`retained tensor ${feed.retained} is missing`);
      }
      const outputs = await session.run(feeds);
      const retain: Record<string, string> = msg.retain ?? {};
      const result: Record<string, unknown> = {};
      const transfer: ArrayBuffer[] = [];
      for (const [name, tensor] of Object.entries<any>(outputs)) {
        if (retain[name] !== undefined) state.set(retain[name], tensor);
        else if (!msg.fetch || msg.fetch.includes(name)) {
          result[name] = fromTensor(tensor);
          transfer.push(tensor.data.buffer);
        }
      }
      return { result, transfer };
    },
  };

  parentPort.on('message', async (msg: any) => {
    try {
      const out = await handlers[msg.op]!(msg);
      try {
        parentPort.postMessage({ id: msg.id, ok: true, result: out.result }, out.transfer ?? []);
      } catch {
        // Buffers owned by the native addon cannot be detached; send a copy instead.
        parentPort.postMessage({ id: msg.id, ok: true, result: out.result });
      }
    } catch (err: any) {
      parentPort.postMessage({ id: msg.id, ok: false, error: String(err?.message ?? err), code: err?.code });
    }
  });
}
