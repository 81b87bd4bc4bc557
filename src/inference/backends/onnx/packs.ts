/**
 * The `zlm-*` classifier packs inside the onnx backend: finds a pack's directory and
 * backbone, says whether it can run (and what to pull when not), assembles a pack whose
 * manifest is absent from its backbone (on first use, or from `sluice models pull`),
 * and keeps loaded packs until their manifest changes on disk (so `sluice packs train`
 * takes effect without a restart). The backbone runs on the backend's own embedding
 * engine: one set of sessions and one batcher for packs and `/v1/embeddings` alike.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ModelSpec } from '../../../domain/models/model-spec.types.js';
import { AppError } from '../../../domain/shared/errors.js';
import type { BackendStatus } from '../../../domain/models/inference-backend.port.js';
import { ClassifierPack, type Backbone, type CacheEvent } from '../../classifier/pack.js';
import { defaultManifest, MANIFEST_FILE, ManifestError, readManifest, type PackManifest } from '../../classifier/manifest.js';
import { atomicWrite } from '../../classifier/heads.js';
import { findGraph, missingFiles, requireJson } from './loader.js';
import { TextTokenizer } from './tokenizer.js';
import { ENGINE_KINDS } from './engines.js';

export type BackboneEmbed = (backbone: ModelSpec, texts: readonly string[], signal?: AbortSignal) => Promise<{ vectors: Float32Array[]; tokens: number }>;

interface Loaded {
  /** The manifest's mtime when loaded (0: assembled in memory, no file). */
  version: number;
  pack: Promise<ClassifierPack>;
}

function manifestVersion(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** One command assembles a pack, pulling its backbone when missing. */
const pullRemedy = (model: ModelSpec, backbone: ModelSpec): string => `run \`sluice models pull ${model.id}\` (it pulls ${backbone.id})`;

function unavailable(message: string, cause?: unknown): AppError {
  return new AppError('unavailable', message, { code: 'model_not_available', param: 'model', cause });
}

export class PackHost {
  readonly #loaded = new Map<string, Loaded>();

  constructor(
    private readonly models: Readonly<Record<string, ModelSpec>>,
    private readonly embed: BackboneEmbed,
    private readonly logger: Logger,
  ) {}

  async status(model: ModelSpec): Promise<BackendStatus> {
    try {
      const manifest = await this.#manifest(model);
      const backbone = this.#backboneModel(model, manifest ?? defaultManifest(model.id));
      const missing = await missingFiles(backbone.binding.path!, ['config.json', 'tokenizer.json'], [['model']]);
      if (missing.length > 0) return { ready: false, detail: this.#missingBackbone(backbone, missing), remedy: pullRemedy(model, backbone) };
      return { ready: true, detail: manifest ? `classifier pack on ${backbone.id}` : `classifier pack on ${backbone.id} (assembled on first use)` };
    } catch (err) {
      if (err instanceof ManifestError) {
        return { ready: false, detail: err.message, remedy: `fix that key, or delete the file and run \`sluice models pull ${model.id}\` to write the default` };
      }
      if (err instanceof AppError) return { ready: false, detail: err.message };
      throw err;
    }
  }

  /** The loaded pack of `model`, assembling it from its backbone if its manifest is absent. */
  async pack(model: ModelSpec): Promise<ClassifierPack> {
    const dir = model.binding.path!;
    // A synchronous stat of one cached inode takes microseconds; the promise form costs a
    // thread-pool round trip on every classification.
    const version = manifestVersion(path.join(dir, MANIFEST_FILE));
    const loaded = this.#loaded.get(model.id);
    if (loaded && loaded.version === version) return loaded.pack;
    const pack = this.#open(model, version === 0);
    this.#loaded.set(model.id, { version, pack });
    pack.catch(() => this.#loaded.delete(model.id));
    return pack;
  }

  /** Writes the default manifest (when absent) and fills the label-embedding cache: `sluice models pull <zlm id>`. */
  async assemble(model: ModelSpec, onCache?: (e: CacheEvent) => void): Promise<{ manifest: PackManifest; dir: string }> {
    let manifest = await this.#manifest(model);
    if (!manifest) {
      manifest = defaultManifest(model.id);
      await atomicWrite(path.join(model.binding.path!, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    }
    await ClassifierPack.open(manifest, model.binding.path!, await this.#backbone(model, manifest), onCache);
    this.#loaded.delete(model.id);
    return { manifest, dir: model.binding.path! };
  }

  /** The backbone model a pack names (the catalog id, its directory possibly overridden by the manifest). */
  backboneModel(model: ModelSpec, manifest: PackManifest): ModelSpec {
    return this.#backboneModel(model, manifest);
  }

  /** Drops every loaded pack and releases their runtime sessions (the backend is closing). */
  async forget(): Promise<void> {
    const loaded = [...this.#loaded.values()];
    this.#loaded.clear();
    await Promise.allSettled(loaded.map(async ({ pack }) => (await pack).close()));
  }

  async #open(model: ModelSpec, assemble: boolean): Promise<ClassifierPack> {
    try {
      if (assemble) {
        this.logger.info({ model: model.id }, 'classifier pack manifest absent: assembling it from its backbone on first use');
        return await ClassifierPack.open(...(await this.#assembleOnFirstUse(model)));
      }
      const manifest = (await this.#manifest(model))!;
      return await ClassifierPack.open(manifest, model.binding.path!, await this.#backbone(model, manifest));
    } catch (err) {
      if (err instanceof ManifestError) throw unavailable(`Model ${model.id} cannot be loaded: ${err.message}`, err);
      throw err;
    }
  }

  async #assembleOnFirstUse(model: ModelSpec): Promise<[PackManifest, string, Backbone]> {
    const manifest = defaultManifest(model.id);
    const backbone = await this.#backbone(model, manifest);
    try {
      await atomicWrite(path.join(model.binding.path!, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    } catch (err) {
      // A read-only MODELS_DIR still serves; the label embeddings are then recomputed per process.
      this.logger.warn({ err, model: model.id }, 'cannot write the classifier pack manifest; serving it from memory');
    }
    return [manifest, model.binding.path!, backbone];
  }

  async #manifest(model: ModelSpec): Promise<PackManifest | null> {
    if (!model.binding.path) throw unavailable(`Model ${model.id} has no model directory configured`);
    return readManifest(model.binding.path, model.id);
  }

  #backboneModel(model: ModelSpec, manifest: PackManifest): ModelSpec {
    const id = manifest.backbone.model;
    const base = this.models[id];
    if (!base || ENGINE_KINDS[id] !== 'embeddings') {
      throw new ManifestError(`${model.id}/${MANIFEST_FILE}: key backbone.model: ${id} is not an embedding model this server runs in process`);
    }
    if (!manifest.backbone.path) return base;
    return { ...base, binding: { ...base.binding, path: path.resolve(model.binding.path!, manifest.backbone.path) } };
  }

  #missingBackbone(backbone: ModelSpec, missing: string[]): string {
    return `its backbone ${backbone.id} is not installed, missing ${missing.join(', ')}`;
  }

  async #backbone(model: ModelSpec, manifest: PackManifest): Promise<Backbone> {
    const backbone = this.#backboneModel(model, manifest);
    const dir = backbone.binding.path!;
    const missing = await missingFiles(dir, ['config.json', 'tokenizer.json'], [['model']]);
    if (missing.length > 0) throw unavailable(`Model ${model.id} is not available: ${this.#missingBackbone(backbone, missing)}; ${pullRemedy(model, backbone)}`);
    const config = await requireJson<{ hidden_size?: number; dim?: number }>(dir, 'config.json');
    const tokenizer = await TextTokenizer.fromDir(dir);
    const graph = (await findGraph(dir, 'model'))!;
    const graphStat = await stat(graph);
    const fingerprint = createHash('sha256')
      .update(await readFile(path.join(dir, 'config.json')))
      .update(await readFile(path.join(dir, 'tokenizer.json')))
      .update(`${path.basename(graph)}:${graphStat.size}:${graphStat.mtimeMs}`)
      .digest('hex');
    const dim = config.hidden_size ?? config.dim ?? backbone.entry.embeddingDimensions ?? 0;
    const embed = this.embed;
    return {
      fingerprint,
      dim,
      embed: (texts, signal) => embed(backbone, texts, signal),
      hasWord: (word) => tokenizer.idOf(word) !== undefined,
      countTokens: (text) => tokenizer.count(text),
    };
  }
}
