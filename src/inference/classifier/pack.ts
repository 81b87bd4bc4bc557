/**
 * A loaded classifier pack: its manifest, label sets, the label embeddings (computed
 * once, cached on disk in the pack under `label-cache/` and recomputed when the backbone's
 * fingerprint or a set's label texts change), and its trained heads. `score` embeds one
 * text once and scores every label set against it.
 *
 * Every set's rows (its label embeddings, or its trained head's weights, which replace
 * them) are stacked in one matrix with each row's calibration, so scoring all sets of
 * any number of texts is one run of one graph (label-product.ts).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { labelSet } from './label-set-loader.js';
import type { LabelSet, LabelSetName } from '../../domain/shared/classification/label-sets.js';
import { ZERO_SHOT_CALIBRATION, type PackManifest } from './manifest.js';
import { calibrate, headLabelIndex, matVec, setLogits, setProbs, type LinearHead, type Matrix, type SetRows } from './scoring.js';
import { readHead } from './heads.js';
import { LabelProduct } from './label-product.js';

/** The encoder a pack runs on: normalised sentence embeddings plus its tokenizer. */
export interface Backbone {
  /** Changes whenever the backbone's weights or tokenizer change. */
  readonly fingerprint: string;
  readonly dim: number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<{ vectors: Float32Array[]; tokens: number }>;
  /** Whether the tokenizer knows `word` as a whole token (word splitting of domains). */
  hasWord(word: string): boolean;
  countTokens(text: string): number;
}

export interface SetScores {
  set: LabelSet;
  /** Calibrated, rolled-up probability of every label, in the set's order. */
  probs: Float32Array;
  /** Whether a trained head (not zero-shot) produced them. */
  trained: boolean;
}

export interface PackScores {
  vector: Float32Array;
  tokens: number;
  sets: Map<LabelSetName, SetScores>;
}

interface SetState extends SetRows {
  set: LabelSet;
  /** The set's rows of the stacked matrix (a view): label embeddings, or the head's weights. */
  rows: Matrix;
}

const CACHE_DIR = 'label-cache';
/** Labels embedded per backbone call while filling the cache (bounded memory, progress). */
const FILL_CHUNK = 256;

export interface CacheEvent {
  set: LabelSetName;
  outcome: 'hit' | 'computed';
}

export class ClassifierPack {
  #sets = new Map<LabelSetName, SetState>();
  #product!: LabelProduct;

  private constructor(
    readonly manifest: PackManifest,
    readonly dir: string,
    readonly backbone: Backbone,
  ) {}

  /** Loads heads and label embeddings (from the cache, or computed and cached). */
  static async open(manifest: PackManifest, dir: string, backbone: Backbone, onCache?: (e: CacheEvent) => void): Promise<ClassifierPack> {
    const pack = new ClassifierPack(manifest, dir, backbone);
    const loaded: { set: LabelSet; rows: Matrix; head: LinearHead | null }[] = [];
    for (const name of manifest.label_sets) {
      const set = labelSet(name);
      const zeroShot = await pack.#labelEmbeddings(set, onCache);
      const headFile = manifest.heads[name];
      const head = headFile ? await readHead(path.join(dir, headFile), manifest.id, backbone) : null;
      loaded.push({ set, rows: head ? head.weights : zeroShot, head });
    }
    pack.#stack(loaded);
    return pack;
  }

  /**
   * One matrix of every set's rows (each set keeps a view of its own), with each row's
   * calibration: σ(z / temperature + bias), plus a head's bias on z first.
   */
  #stack(loaded: readonly { set: LabelSet; rows: Matrix; head: LinearHead | null }[]): void {
    const dim = this.backbone.dim;
    const total = loaded.reduce((n, l) => n + l.rows.rows, 0);
    const data = new Float32Array(total * dim);
    const scale = new Float32Array(total);
    const shift = new Float32Array(total);
    let offset = 0;
    for (const { set, rows: own, head } of loaded) {
      const rows = { rows: own.rows, dim, data: data.subarray(offset * dim, (offset + own.rows) * dim) };
      rows.data.set(own.data);
      const headIndex = head ? headLabelIndex(set, head) : [];
      this.#sets.set(set.name, { set, rows, offset, head: head ? { ...head, weights: rows } : null, headIndex });
      const { temperature, bias } = this.calibration(set.name);
      for (let r = 0; r < own.rows; r++) {
        scale[offset + r] = 1 / temperature;
        shift[offset + r] = (head ? head.bias[r]! : 0) / temperature + bias;
      }
      offset += own.rows;
    }
    this.#product = new LabelProduct({ rows: total, dim, data }, { scale, shift });
  }

  /** Releases the label product's runtime session (a later score loads it again). */
  close(): Promise<void> {
    return this.#product.close();
  }

  get labelSets(): LabelSet[] {
    return [...this.#sets.values()].map((s) => s.set);
  }

  /** Embeds `text` once and scores every label set. */
  async score(text: string, signal?: AbortSignal): Promise<PackScores> {
    const { vectors, tokens } = await this.backbone.embed([text], signal);
    return { vector: vectors[0]!, tokens, sets: await this.scoreVector(vectors[0]!) };
  }

  /** Every label set (or those in `only`) scored against one embedding. */
  async scoreVector(vector: Float32Array, only?: readonly LabelSetName[]): Promise<Map<LabelSetName, SetScores>> {
    return (await this.scoreVectors([vector], only))[0]!;
  }

  /** Every label set (or those in `only`) scored against each embedding: one matrix product for all. */
  async scoreVectors(vectors: readonly Float32Array[], only?: readonly LabelSetName[]): Promise<Map<LabelSetName, SetScores>[]> {
    if (vectors.length === 0) return [];
    const { data, rows, first } = await this.#product.multiply(vectors);
    const sets = [...this.#sets].filter(([name]) => !only || only.includes(name));
    return vectors.map((_, n) => {
      const row = data.subarray((first + n) * rows, (first + n + 1) * rows);
      const out = new Map<LabelSetName, SetScores>();
      for (const [name, state] of sets) out.set(name, { set: state.set, probs: setProbs(state.set, state, row), trained: state.head !== null });
      return out;
    });
  }

  /**
   * Zero-shot probabilities of labels the pack does not have (the decision route's
   * questions outside its label sets): the labels embedded in one backbone call, scored
   * against `vector` with the zero-shot calibration.
   */
  async scoreFreeLabels(vector: Float32Array, labels: readonly string[], signal?: AbortSignal): Promise<Float32Array> {
    if (labels.length === 0) return new Float32Array(0);
    const { vectors } = await this.backbone.embed(labels, signal);
    const data = new Float32Array(labels.length * vector.length);
    vectors.forEach((v, i) => data.set(v, i * vector.length));
    return calibrate(matVec({ rows: labels.length, dim: vector.length, data }, vector), ZERO_SHOT_CALIBRATION);
  }

  /** Uncalibrated logits of a set (training and calibration read these). */
  logits(name: LabelSetName, vector: Float32Array): Float32Array {
    const state = this.#state(name);
    return setLogits(state.set, vector, state.rows, state.head, state.headIndex);
  }

  calibration(name: LabelSetName) {
    return this.manifest.calibration[name] ?? (this.#state(name).head ? { temperature: 1, bias: 0 } : ZERO_SHOT_CALIBRATION);
  }

  #state(name: LabelSetName): SetState {
    const state = this.#sets.get(name);
    if (!state) throw new Error(`pack ${this.manifest.id} has no label set ${name}`);
    return state;
  }

  async #labelEmbeddings(set: LabelSet, onCache?: (e: CacheEvent) => void): Promise<Matrix> {
    const key = createHash('sha256')
      .update(this.backbone.fingerprint)
      .update('\0')
      .update(set.labels.map((l) => l.text).join('\n'))
      .digest('hex');
    const file = path.join(this.dir, CACHE_DIR, `${set.name}.f32`);
    const dim = this.backbone.dim;
    const cached = await readCache(file, key, set.labels.length * dim);
    if (cached) {
      onCache?.({ set: set.name, outcome: 'hit' });
      return { rows: set.labels.length, dim, data: cached };
    }
    const data = new Float32Array(set.labels.length * dim);
    for (let start = 0; start < set.labels.length; start += FILL_CHUNK) {
      const texts = set.labels.slice(start, start + FILL_CHUNK).map((l) => l.text);
      const { vectors } = await this.backbone.embed(texts);
      vectors.forEach((v, i) => data.set(v, (start + i) * dim));
    }
    await writeCache(file, key, data);
    onCache?.({ set: set.name, outcome: 'computed' });
    return { rows: set.labels.length, dim, data };
  }
}

/** Cache file: 64 hex characters of key, then the float32 matrix. */
async function readCache(file: string, key: string, floats: number): Promise<Float32Array | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch {
    return null;
  }
  if (bytes.length !== 64 + floats * 4 || bytes.subarray(0, 64).toString('latin1') !== key) return null;
  const data = new Float32Array(floats);
  new Uint8Array(data.buffer).set(bytes.subarray(64));
  return data;
}

/** Written to a temporary name and renamed: a crash never leaves a torn cache. */
async function writeCache(file: string, key: string, data: Float32Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, Buffer.concat([Buffer.from(key, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
  await rename(tmp, file);
}
