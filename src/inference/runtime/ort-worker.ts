/**
 * The body of the ONNX Runtime worker thread. onnxruntime-node's `session.run()` is
 * synchronous on the calling thread (its promise is a setImmediate wrapper), so every
 * session lives in this worker and the event loop of the server never runs a graph.
 *
 * The function is stringified into an eval'd worker, so it must be self-contained: no
 * imports, no references to module scope. Outputs can be retained in the worker under a
 * key (a decoder's key/value cache) and fed back by reference, so large tensors never
 * cross threads.
 */

/** A tensor as it crosses threads: typed array + dims (bool tensors as Uint8Array). */
export interface WireTensor {
  type: 'float32' | 'int64' | 'int32' | 'bool';
  dims: number[];
  data: Float32Array | BigInt64Array | Int32Array | Uint8Array;
}

/** A feed is a tensor, or a reference to one retained by an earlier run of the same state. */
export type WireFeed = WireTensor | { retained: string };

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
    };

export type WorkerResponse =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string; code?: string };

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-require-imports */
export function ortWorkerMain(): void {
  const { parentPort, workerData } = require('node:worker_threads');
  const ort = require(workerData.ortPath);
  const sessions = new Map<string, any>();
  const states = new Map<string, Map<string, any>>();

  const toTensor = (t: any) => new ort.Tensor(t.type, t.data, t.dims);
  const fromTensor = (t: any) => ({ type: t.type, dims: Array.from(t.dims), data: t.data });

  const handlers: Record<string, (msg: any) => Promise<unknown>> = {
    async load(msg) {
      const session = await ort.InferenceSession.create(msg.path, msg.options);
      sessions.set(msg.key, session);
      return { inputNames: session.inputNames, outputNames: session.outputNames };
    },
    async release(msg) {
      const session = sessions.get(msg.key);
      sessions.delete(msg.key);
      if (session) await session.release();
      return null;
    },
    async 'drop-state'(msg) {
      states.delete(msg.state);
      return null;
    },
    async run(msg) {
      const session = sessions.get(msg.key);
      if (!session) throw Object.assign(new Error(`session ${msg.key} is not loaded`), { code: 'not_loaded' });
      const state = msg.state ? (states.get(msg.state) ?? new Map()) : new Map();
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
      if (msg.state) states.set(msg.state, state);
      return { result, transfer };
    },
  };

  parentPort.on('message', async (msg: any) => {
    try {
      const out: any = await handlers[msg.op]!(msg);
      if (msg.op === 'run') {
        try {
          parentPort.postMessage({ id: msg.id, ok: true, result: out.result }, out.transfer);
        } catch {
          // Buffers owned by the native addon cannot be detached; send a copy instead.
          parentPort.postMessage({ id: msg.id, ok: true, result: out.result });
        }
      } else parentPort.postMessage({ id: msg.id, ok: true, result: out });
    } catch (err: any) {
      parentPort.postMessage({ id: msg.id, ok: false, error: String(err?.message ?? err), code: err?.code });
    }
  });
}
