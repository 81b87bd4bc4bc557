/**
 * Calibrated probabilities of every row of a pack's label matrix against embeddings, as
 * one ONNX graph on onnxruntime-node: every label set's rows (zero-shot label
 * embeddings, or a trained head's weights) stacked in one [rows × dim] initializer, and
 * p = σ(scale[r] · (row r · v) + shift[r]) computed as Sigmoid(Gemm(v, W', shift)) with
 * the per-row scale folded into W'. Calibration is σ(z / temperature + bias) (plus a
 * head's bias before it), so scale = 1 / temperature and shift = headBias / temperature
 * + bias: the graph answers probabilities, and JavaScript only rolls them up.
 *
 * The graph is built by the project (runtime/onnx-model.ts) rather than taken from a
 * library's generic MatMul: a constant weight lets the runtime pack it once at load,
 * the sigmoid runs vectorised in the same run, and the session is single-threaded (a
 * product this size finishes before a second thread would have woken). It runs on the
 * calling thread (onnxruntime-node runs a session synchronously) for the fraction of a
 * millisecond a product takes, which is less than a round trip to a worker thread.
 *
 * Calls made before the current microtasks run out (the callers one embedding batch
 * answered together) share one run.
 */
import type * as Ort from 'onnxruntime-node';
import { encodeOnnxModel } from '../runtime/onnx-model.js';
import type { Matrix } from './scoring.js';

type OrtModule = typeof Ort;
let loading: Promise<OrtModule> | null = null;
/** Loaded on the first product: processes that never classify do not pay for it. */
const ort = (): Promise<OrtModule> => (loading ??= import('onnxruntime-node'));

/** Each row's calibration: p = σ(scale · (row · v) + shift). */
export interface RowCalibration {
  scale: Float32Array;
  shift: Float32Array;
}

/** `data[(first + n) * rows + r]`: the probability of row `r` for the caller's `n`-th vector. */
export interface Product {
  readonly data: Float32Array;
  readonly rows: number;
  /** Index of the caller's first vector in the shared run. */
  readonly first: number;
}

interface Pending {
  vectors: readonly Float32Array[];
  resolve: (product: Product) => void;
  reject: (err: unknown) => void;
}

export class LabelProduct {
  #session: Promise<Ort.InferenceSession> | null = null;
  #queue: Pending[] = [];

  constructor(
    readonly matrix: Matrix,
    readonly calibration: RowCalibration,
  ) {
    if (calibration.scale.length !== matrix.rows || calibration.shift.length !== matrix.rows) {
      throw new Error(`the label matrix has ${matrix.rows} rows, its calibration ${calibration.scale.length} and ${calibration.shift.length}`);
    }
  }

  /** Probabilities of every row for each of `vectors` (each of the matrix's dimension). */
  multiply(vectors: readonly Float32Array[]): Promise<Product> {
    for (const v of vectors) {
      if (v.length !== this.matrix.dim) throw new Error(`vector has ${v.length} dimensions, the label matrix ${this.matrix.dim}`);
    }
    return new Promise((resolve, reject) => {
      if (this.#queue.push({ vectors, resolve, reject }) === 1) queueMicrotask(() => void this.#flush());
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    try {
      const { dim, rows } = this.matrix;
      const n = batch.reduce((sum, p) => sum + p.vectors.length, 0);
      const input = new Float32Array(n * dim);
      let j = 0;
      for (const p of batch) for (const v of p.vectors) input.set(v, dim * j++);
      const [session, { Tensor }] = await Promise.all([this.#load(), ort()]);
      const out = await session.run({ x: new Tensor('float32', input, [n, dim]) });
      const data = out.p!.data as Float32Array;
      let first = 0;
      for (const p of batch) {
        p.resolve({ data, rows, first });
        first += p.vectors.length;
      }
    } catch (err) {
      this.#session = null;
      for (const p of batch) p.reject(err);
    }
  }

  /** Releases the session now (a dropped product's session is otherwise freed when collected). */
  async close(): Promise<void> {
    const session = this.#session;
    this.#session = null;
    if (session) await session.then((s) => s.release()).catch(() => undefined);
  }

  #load(): Promise<Ort.InferenceSession> {
    return (this.#session ??= ort().then(({ InferenceSession }) =>
      InferenceSession.create(this.#graph(), {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      }),
    ));
  }

  /** Sigmoid(Gemm(x, W', shift, transB)): x is [n × dim], W' the rows times their scale. */
  #graph(): Uint8Array {
    const { rows, dim, data } = this.matrix;
    const { scale, shift } = this.calibration;
    const scaled = new Float32Array(rows * dim);
    for (let r = 0; r < rows; r++) {
      const s = scale[r]!;
      for (let d = r * dim; d < (r + 1) * dim; d++) scaled[d] = data[d]! * s;
    }
    return encodeOnnxModel({
      name: 'label_product',
      nodes: [
        { op: 'Gemm', inputs: ['x', 'w', 'shift'], outputs: ['z'], ints: { transB: 1 } },
        { op: 'Sigmoid', inputs: ['z'], outputs: ['p'] },
      ],
      initializers: [
        { name: 'w', dims: [rows, dim], data: scaled },
        { name: 'shift', dims: [rows], data: shift },
      ],
      inputs: [{ name: 'x', shape: ['n', dim] }],
      outputs: [{ name: 'p', shape: ['n', rows] }],
    });
  }
}
