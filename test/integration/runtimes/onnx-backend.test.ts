/**
 * The onnx backend on generated random-weight models: real ONNX Runtime, real
 * tokenizers. Checks shapes, normalisation, truncation, batching and task outputs.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { tempDir } from '../../helpers/databases.js';

let config: Readonly<Config>;
let modelsDir: string;
let backend: OnnxBackend;
const ctx = () => ({ requestId: 'req_test', signal: new AbortController().signal });

beforeAll(() => {
  modelsDir = buildTestModels(['all-minilm-l6-v2', 'bge-small-en-v1.5', 'deberta-v3-small', 't5-small']);
  config = loadConfig({ DATA_DIR: tempDir(), MODELS_DIR: modelsDir, LOG_LEVEL: 'silent' });
  backend = new OnnxBackend(config.runtimes, pino({ level: 'silent' }));
});

afterAll(async () => {
  await backend.close();
  rmSync(modelsDir, { recursive: true, force: true });
});

describe('onnx embeddings', () => {
  it('returns one normalised 32-dim vector per input and counts tokens', async () => {
    const model = config.models['all-minilm-l6-v2']!;
    expect(await backend.status(model)).toMatchObject({ ready: true });
    const out = await backend.embed({ ...ctx(), model, inputs: ['hello world', 'the weather is good today'] });
    expect(out.vectors).toHaveLength(2);
    for (const v of out.vectors) {
      expect(v.length).toBe(32);
      const norm = Math.sqrt(Array.from(v).reduce((a, x) => a + x * x, 0));
      expect(norm).toBeCloseTo(1, 4);
    }
    const counted = (await backend.countTokens(model, 'hello world')) + (await backend.countTokens(model, 'the weather is good today'));
    expect(out.usage.inputTokens).toBe(counted);
    expect(await backend.countTokens(model, 'hello world')).toBe(4); // [CLS] hello world [SEP]
  });

  it('gives the same vector for a text alone and inside a padded batch', async () => {
    const model = config.models['bge-small-en-v1.5']!;
    const alone = await backend.embed({ ...ctx(), model, inputs: ['hello'] });
    const batched = await backend.embed({ ...ctx(), model, inputs: ['hello', 'a much longer sentence about sports and finance news'] });
    const a = Array.from(alone.vectors[0]!);
    const b = Array.from(batched.vectors[0]!);
    a.forEach((x, i) => expect(x).toBeCloseTo(b[i]!, 4));
  });

  it('truncates inputs at the model limit', async () => {
    const model = config.models['all-minilm-l6-v2']!;
    const long = 'word '.repeat(2000);
    const out = await backend.embed({ ...ctx(), model, inputs: [long] });
    expect(out.usage.inputTokens).toBe(256);
  });

  it('coalesces concurrent calls into fewer runtime calls', async () => {
    const model = config.models['all-minilm-l6-v2']!;
    const before = { ...backend.batchStats(model.id)! };
    const calls = Array.from({ length: 40 }, (_, i) => backend.embed({ ...ctx(), model, inputs: [`sentence number ${i} about music`] }));
    const results = await Promise.all(calls);
    expect(results.every((r) => r.vectors.length === 1)).toBe(true);
    const after = backend.batchStats(model.id)!;
    expect(after.items - before.items).toBe(40);
    expect(after.batches - before.batches).toBeLessThan(40);
    expect(after.largestBatch).toBeLessThanOrEqual(32);
  });
});

describe('onnx zero-shot (deberta-v3-small)', () => {
  it('returns lower-cased labels with probabilities summing to 1, sorted descending', async () => {
    const model = config.models['deberta-v3-small']!;
    const out = await backend.runTask({ ...ctx(), model, input: 'the game ended late', labels: ['Sports', 'finance', 'politics'], options: {} });
    const result = out.result as Record<string, number>;
    expect(Object.keys(result).sort()).toEqual(['finance', 'politics', 'sports']);
    const values = Object.values(result);
    expect(values.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    expect([...values].sort((a, b) => b - a)).toEqual(values);
    expect(out.usage.inputTokens).toBeGreaterThan(0);
  });

  it('rejects more than 10 labels', async () => {
    const model = config.models['deberta-v3-small']!;
    const labels = Array.from({ length: 11 }, (_, i) => `label${i}`);
    await expect(backend.runTask({ ...ctx(), model, input: 'x', labels, options: {} })).rejects.toMatchObject({ kind: 'invalid_request' });
  });
});

describe('onnx summarization (t5-small)', () => {
  it('decodes a summary string within the model length bounds', async () => {
    const model = config.models['t5-small']!;
    const out = await backend.runTask({ ...ctx(), model, input: 'the weather is good today and people travel to london for the meeting', labels: null, options: {} });
    expect(typeof out.result).toBe('string');
    expect(out.usage.outputTokens).toBeGreaterThanOrEqual(5); // min_length
    expect(out.usage.outputTokens).toBeLessThanOrEqual(40); // max_length
    expect(out.usage.inputTokens).toBe(await backend.countTokens(model, 'the weather is good today and people travel to london for the meeting'));
  });

  it('truncates the input at 512 tokens and honours a max_tokens option', async () => {
    const model = config.models['t5-small']!;
    const out = await backend.runTask({ ...ctx(), model, input: 'news '.repeat(1000), labels: null, options: { max_tokens: 7 } });
    expect(out.usage.inputTokens).toBe(512);
    expect(out.usage.outputTokens).toBeLessThanOrEqual(7);
  });
});

describe('model lifetime', () => {
  it('releases a model idle past runtimes.idle_unload_seconds and reloads it on demand', async () => {
    const idle = loadConfig({ DATA_DIR: tempDir(), MODELS_DIR: config.modelsDir, LOG_LEVEL: 'silent', RUNTIMES_IDLE_UNLOAD_SECONDS: '1' });
    const own = new OnnxBackend(idle.runtimes, pino({ level: 'silent' }));
    const model = idle.models['all-minilm-l6-v2']!;
    try {
      await Promise.all(Array.from({ length: 5 }, () => own.embed({ ...ctx(), model, inputs: ['first call'] })));
      const firstLoad = own.runtime.runs;
      expect(own.batchStats(model.id)).not.toBeNull();
      await new Promise((r) => setTimeout(r, 1400));
      expect(own.batchStats(model.id)).toBeNull(); // released
      const again = await own.embed({ ...ctx(), model, inputs: ['after idle'] });
      expect(again.vectors[0]).toHaveLength(32);
      expect(own.runtime.runs).toBeGreaterThan(firstLoad);
    } finally {
      await own.close();
    }
  });

  it('answers 503 model_not_available when the files are missing', async () => {
    const empty = loadConfig({ DATA_DIR: tempDir(), MODELS_DIR: tempDir(), LOG_LEVEL: 'silent' });
    const own = new OnnxBackend(empty.runtimes, pino({ level: 'silent' }));
    const model = empty.models['all-minilm-l6-v2']!;
    expect(await own.status(model)).toMatchObject({ ready: false });
    await expect(own.embed({ ...ctx(), model, inputs: ['x'] })).rejects.toMatchObject({ kind: 'unavailable', code: 'model_not_available' });
    await own.close();
  });
});
