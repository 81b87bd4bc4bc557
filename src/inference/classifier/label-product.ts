/**
 * The raw products of a pack's label rows with embeddings, as one ONNX MatMul: every
 * label set's rows (zero-shot label embeddings, or a trained head's weights) stacked in
 * one [rows × dim] matrix, kept as one tensor, multiplied with a [dim × N] batch of
 * embeddings by `matmul` of @huggingface/transformers (a MatMul graph on
 * onnxruntime-node, whose blocked kernels beat any JavaScript loop over thousands of
 * labels by an order of magnitude, and keep the event loop free for that long).
 *
 * Calls made before the current microtasks run out (the callers one embedding batch
 * answered together) share one product: one run instead of one per caller, and no extra
 * turn of the event loop before it starts.
 */
import type * as TransformersModule from '@huggingface/transformers';
import type { Tensor } from '@huggingface/transformers';
import type { Matrix } from './scoring.js';

type Transformers = typeof TransformersModule;
let loading: Promise<Transformers> | null = null;
/** Loaded on the first product: processes that never classify do not pay for it. */
const transformers = (): Promise<Transformers> => (loading ??= import('@huggingface/transformers'));

interface Pending {
  vectors: readonly Float32Array[];
  resolve: (product: Product) => void;
  reject: (err: unknown) => void;
}

/** `value(row, n)`: the product of matrix row `row` with the caller's `n`-th vector. */
export interface Product {
  readonly data: Float32Array;
  /** Columns of `data` (vectors in the shared batch). */
  readonly stride: number;
  /** Column of the caller's first vector. */
  readonly first: number;
}

export class LabelProduct {
  #tensor: Promise<Tensor> | null = null;
  #queue: Pending[] = [];

  constructor(readonly matrix: Matrix) {}

  /** Products of every row with each of `vectors` (each of the matrix's dimension). */
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
      const { dim } = this.matrix;
      const n = batch.reduce((sum, p) => sum + p.vectors.length, 0);
      // [dim × n]: column j is the j-th vector of the batch.
      const columns = new Float32Array(dim * n);
      let j = 0;
      for (const p of batch) {
        for (const v of p.vectors) {
          for (let d = 0; d < dim; d++) columns[d * n + j] = v[d]!;
          j++;
        }
      }
      const { matmul, Tensor } = await transformers();
      const product = await matmul(await this.#labels(), new Tensor('float32', columns, [dim, n]));
      const data = product.data as Float32Array;
      let first = 0;
      for (const p of batch) {
        p.resolve({ data, stride: n, first });
        first += p.vectors.length;
      }
    } catch (err) {
      this.#tensor = null;
      for (const p of batch) p.reject(err);
    }
  }

  #labels(): Promise<Tensor> {
    return (this.#tensor ??= transformers().then(({ Tensor }) => new Tensor('float32', this.matrix.data, [this.matrix.rows, this.matrix.dim])));
  }
}
