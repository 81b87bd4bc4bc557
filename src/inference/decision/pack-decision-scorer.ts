/**
 * The decision route's scorer over the classifier packs of the onnx backend: the state is
 * scored by the pack (one backbone pass: its label scores and its embedding), and the
 * per-question-type calibrators are read from `decision-calibration.json` in the model's
 * directory (re-read when it changes). Zero-shot questions go to the model's configured
 * scorer: `embedding` embeds free texts (criteria, levels, noul instructions) on the same
 * backbone in one call for all of a request's uncached texts and keeps them (with their
 * token counts) in bounded LRU caches per backbone; `nli` runs a cross-encoder; `llm`
 * asks a chat model (llm-scores.ts).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ModelSpec } from '../../domain/models/model-spec.types.js';
import type { DecisionModel, DecisionScorer, ModelCalibration, StateScores, ZeroShotRequest, ZeroShotScorerKind, ZeroShotScores } from '../../domain/decision/scorer.port.js';
import { embedCached, embeddingScores, nliScores, type NliRunner } from './zero-shot-scores.js';
import { llmScores, type NextTokenRunner } from './llm-scores.js';
import { AppError, isAppError } from '../../domain/shared/errors.js';
import type { ModelRegistry } from '../registry.js';
import { OnnxBackend } from '../backends/onnx/index.js';
import { packText } from '../classifier/classify.js';
import type { ClassifierPack } from '../classifier/pack.js';
import type { LabelSetName } from '../../domain/shared/classification/label-sets.js';

export const DECISION_CALIBRATION_FILE = 'decision-calibration.json';
/** Cached text embeddings per backbone (a few MB at 384 dimensions). */
const CACHE_ENTRIES = 8192;

/** A bounded least-recently-used map of texts to what the backbone made of them. */
export class TextCache<V> {
  readonly #entries = new Map<string, V>();
  get(key: string): V | undefined {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }
  set(key: string, value: V): void {
    this.#entries.set(key, value);
    if (this.#entries.size > CACHE_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

interface CalibrationFile {
  mtimeMs: number;
  calibration: ModelCalibration | null;
}

function isCalibrator(v: unknown): boolean {
  const c = v as { temperature?: unknown; bias?: unknown } | null;
  return typeof c === 'object' && c !== null && typeof c.temperature === 'number' && c.temperature > 0 && typeof c.bias === 'number';
}

export interface ScorerSettings {
  byModel: Readonly<Record<string, ZeroShotScorerKind>>;
  nliModel: string;
  llmModel: string | null;
}

export class PackDecisionScorer implements DecisionScorer {
  readonly #caches = new Map<string, { vectors: TextCache<Float32Array>; tokens: TextCache<number> }>();
  readonly #calibrations = new Map<string, CalibrationFile>();

  constructor(
    private readonly registry: ModelRegistry,
    /** The zero-shot scorer of each decision model (default `embedding`), the NLI model `nli` runs on, the chat model `llm` asks. */
    private readonly scorers: ScorerSettings = { byModel: {}, nliModel: 'deberta-v3-small', llmModel: null },
  ) {}

  async open(model: ModelSpec, signal?: AbortSignal, requestId?: string): Promise<DecisionModel> {
    const backend = await this.registry.backendFor(model, model.entry.task === 'moderation' ? 'moderate' : 'runTask');
    if (!(backend instanceof OnnxBackend)) {
      throw new AppError('unavailable', `Model ${model.id} answers decisions only on its in-process classifier pack; remove models.${model.id}.backend and base_url from sluice.yaml`, {
        code: 'model_not_available',
        param: 'model',
      });
    }
    const pack = await backend.decisionPack(model, signal);
    const kind = this.scorers.byModel[model.id] ?? 'embedding';
    const nli = kind === 'nli' ? await this.#nli(signal) : null;
    const llm = kind === 'llm' ? await this.#llm(requestId ?? `req_${randomUUID()}`, signal) : null;
    return this.#model(model, pack, nli, llm);
  }

  /** A decision model runs on its in-process pack: ready when the onnx backend has its files (the registry caches this). */
  async ready(model: ModelSpec): Promise<boolean> {
    const status = await this.registry.status(model);
    return status.ready && status.backend === 'onnx';
  }

  /**
   * The chat model the llm scorer asks, on any backend that reads next-token
   * probabilities (an upstream with logprobs, or in-process gguf). A remote model that
   * fails is 502 `upstream_error`, whatever the cause (refused, timed out, no logprobs).
   */
  async #llm(requestId: string, signal?: AbortSignal): Promise<NextTokenRunner> {
    const id = this.scorers.llmModel;
    const model = id === null ? undefined : this.registry.find(id);
    if (!model) throw new AppError('unavailable', `The llm scorer's chat model ${id ?? '(decision.llm_model)'} is not configured; set decision.llm_model in sluice.yaml to a chat model`, { code: 'model_not_available', param: 'model' });
    const backend = await this.registry.backendFor(model, 'nextTokenLogprobs');
    return async (messages, candidates, stop) => {
      try {
        const call = { requestId, signal: signal ? AbortSignal.any([signal, stop]) : stop };
        return (await backend.nextTokenLogprobs!({ model, messages, candidates, ...call })).logprobs;
      } catch (err) {
        // A call stopped because the client left or a sibling question failed is not the upstream's fault.
        if (!model.binding.upstream || signal?.aborted || stop.aborted) throw err;
        const why = isAppError(err) ? err.message : 'the upstream request failed';
        throw new AppError('upstream', `The llm scorer's model ${model.id} failed: ${why}`, { code: 'upstream_error', retryable: isAppError(err) && err.retryable, cause: err });
      }
    };
  }

  /** The NLI model and the onnx backend that runs it; 503 `model_not_available` when it cannot run. */
  async #nli(signal?: AbortSignal): Promise<NliRunner> {
    const model = this.registry.find(this.scorers.nliModel);
    if (!model) throw new AppError('unavailable', `The nli scorer's model ${this.scorers.nliModel} is not configured; set decision.nli_model in sluice.yaml to deberta-v3-small`, { code: 'model_not_available', param: 'model' });
    const backend = await this.registry.backendFor(model, 'runTask');
    if (!(backend instanceof OnnxBackend)) {
      throw new AppError('unavailable', `The nli scorer runs ${model.id} in process only; remove models.${model.id}.backend and base_url from sluice.yaml`, { code: 'model_not_available', param: 'model' });
    }
    return (premise, hypotheses) => backend.nliPairs(model, premise, hypotheses, signal);
  }

  #model(model: ModelSpec, pack: ClassifierPack, nli: NliRunner | null, llm: NextTokenRunner | null): DecisionModel {
    const { backbone } = pack;
    let cache = this.#caches.get(backbone.fingerprint);
    if (!cache) this.#caches.set(backbone.fingerprint, (cache = { vectors: new TextCache(), tokens: new TextCache() }));
    const { vectors: texts, tokens } = cache;
    return {
      labelSets: pack.labelSets,
      calibration: this.#calibration(model),
      async scoreState(text: string, sets: ReadonlySet<LabelSetName>, signal?: AbortSignal): Promise<StateScores> {
        const { vectors, tokens } = await backbone.embed([packText(pack, text)], signal);
        const vector = vectors[0]!;
        const scored = await pack.scoreVector(vector, [...sets]);
        return { vector, tokens, probs: new Map([...scored].map(([name, s]) => [name, s.probs])) };
      },
      async zeroShot(state: StateScores, stateText: string, wanted: ZeroShotRequest, signal?: AbortSignal): Promise<ZeroShotScores> {
        if (llm) return llmScores(llm, stateText, wanted.questions);
        const unique = [...new Set(wanted.texts)];
        if (nli) return nliScores(unique, await nli(stateText, unique));
        return embeddingScores(state.vector, await embedCached(texts, backbone, unique, signal));
      },
      // Question texts repeat across requests; tokenizing them again costs more than the lookup.
      countTokens(text: string): number {
        let count = tokens.get(text);
        if (count === undefined) tokens.set(text, (count = backbone.countTokens(text)));
        return count;
      },
    };
  }

  /** The model's fitted calibrators, or null (identity) when none are stored. */
  #calibration(model: ModelSpec): ModelCalibration | null {
    const file = path.join(model.binding.path ?? '', DECISION_CALIBRATION_FILE);
    let mtimeMs = 0;
    try {
      mtimeMs = statSync(file).mtimeMs;
    } catch {
      return null;
    }
    const known = this.#calibrations.get(model.id);
    if (known && known.mtimeMs === mtimeMs) return known.calibration;
    let calibration: ModelCalibration | null = null;
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      calibration = {};
      for (const type of ['noul', 'choice', 'score'] as const) {
        if (isCalibrator(parsed[type])) calibration[type] = parsed[type] as ModelCalibration['noul'];
      }
    } catch {
      throw new AppError('unavailable', `Model ${model.id} cannot be used: its ${DECISION_CALIBRATION_FILE} is not valid JSON; fix it, or delete it and run \`sluice calibrate ${model.id} <labelled.jsonl>\``, {
        code: 'model_not_available',
        param: 'model',
      });
    }
    this.#calibrations.set(model.id, { mtimeMs, calibration });
    return calibration;
  }
}
