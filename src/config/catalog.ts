/**
 * The catalog of every model id the spec names: task, the routes it answers on
 * (digest §1.0), context limit, default prices and where its weights come from.
 * The config file binds ids to backends and may override prices and limits.
 */
import type { BackendKind, CatalogEntry, ModelRoute, ModelTask } from '../domain/models/model-spec.types.js';

const BOTH: readonly ModelRoute[] = ['chat', 'responses'];
const CHAT_ONLY: readonly ModelRoute[] = ['chat'];

function entry(
  id: string,
  task: ModelTask,
  routes: readonly ModelRoute[],
  contextLength: number,
  prices: [number, number],
  defaultBackend: BackendKind,
  hubRepo: string | null,
  extra: Partial<CatalogEntry> = {},
): CatalogEntry {
  return {
    id,
    task,
    routes,
    contextLength,
    truncatesInput: false,
    inputPerMillionUsd: prices[0],
    outputPerMillionUsd: prices[1],
    defaultBackend,
    hubRepo,
    ...extra,
  };
}

export const CATALOG: readonly CatalogEntry[] = Object.freeze([
  entry('gpt-oss-120b', 'chat', BOTH, 131_072, [0.15, 0.6], 'upstream', null),
  entry('qwen3-30b-a3b-fp8', 'chat', CHAT_ONLY, 32_768, [0.05, 0.3], 'upstream', null),
  entry('glm-5.2', 'chat', CHAT_ONLY, 1_048_576, [1.1, 3.5], 'upstream', null),
  entry('deepseek-v4-flash', 'chat', CHAT_ONLY, 1_048_576, [0.07, 0.14], 'upstream', null),
  // The docs disagree on llama's Responses support; the main OpenAPI enum lists it, so both.
  entry('llama-3.1-8b-instruct-fast', 'chat', BOTH, 131_072, [0.02, 0.05], 'upstream', null),
  entry('LFM2.5-1.2B-Instruct', 'chat', BOTH, 32_768, [0.02, 0.05], 'gguf', 'LiquidAI/LFM2.5-1.2B-Instruct-GGUF'),
  entry('LFM2.5-1.2B-Thinking', 'chat', BOTH, 32_768, [0.02, 0.05], 'gguf', 'LiquidAI/LFM2.5-1.2B-Thinking-GGUF'),
  entry('deberta-v3-small', 'classification', BOTH, 400, [0.02, 0.05], 'onnx', 'Xenova/nli-deberta-v3-small'),
  entry('gliner2-base-v1', 'extraction', BOTH, 800, [0.02, 0.05], 'onnx', 'fastino/gliner2-base-v1'),
  entry('gliner-multi-pii-v1', 'extraction', BOTH, 800, [0.02, 0.05], 'onnx', 'knowledgator/gliner-pii-base-v1.0'),
  entry('zlm-v1-iab-classify-edge', 'classification', [...BOTH, 'systemone'], 400, [0.02, 0.05], 'onnx', null),
  entry('zlm-v2-iab-classify-edge-enriched', 'classification', [...BOTH, 'systemone'], 400, [0.02, 0.05], 'onnx', null),
  entry('zlm-v1-iab-domain-classifier', 'classification', [...BOTH, 'systemone'], 100, [0.02, 0.05], 'onnx', null),
  entry('zlm-v1-multi-iab-classify', 'classification', BOTH, 400, [0.05, 0.4], 'onnx', null, { truncatesInput: true }),
  entry('t5-small', 'summarization', BOTH, 512, [0.05, 0.4], 'onnx', 'Xenova/t5-small', { truncatesInput: true }),
  entry('zlm-v1-moderation-edge', 'moderation', ['moderations', 'systemone'], 4_000, [0.02, 0.05], 'onnx', null),
  entry('all-minilm-l6-v2', 'embeddings', ['embeddings'], 256, [0.5, 0], 'onnx', 'Xenova/all-MiniLM-L6-v2', {
    truncatesInput: true,
    responseModel: 'all-MiniLM-L6-v2',
    embeddingDimensions: 384,
  }),
  entry('bge-small-en-v1.5', 'embeddings', ['embeddings'], 512, [0.5, 0], 'onnx', 'Xenova/bge-small-en-v1.5', {
    truncatesInput: true,
    embeddingDimensions: 384,
  }),
  entry('whisper-tiny', 'transcription', ['transcriptions', 'translations'], 448, [0.02, 0.05], 'onnx', 'onnx-community/whisper-tiny'),
]);

const BY_ID = new Map(CATALOG.map((e) => [e.id, e]));

export const catalogEntry = (id: string): CatalogEntry | undefined => BY_ID.get(id);

export const CATALOG_IDS: readonly string[] = CATALOG.map((e) => e.id);
