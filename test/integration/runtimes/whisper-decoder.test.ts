/**
 * The Whisper decoder on a generated random-weight model with the layout of the real
 * onnx-community export (decoder_model_merged.onnx): the cross-attention keys/values are
 * computed once and reused (output equality against recomputing them), cached steps do
 * not read encoder_hidden_states, and the greedy loop that runs inside the ONNX worker
 * decodes exactly what the step-by-step reference does.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { TINY_WHISPER } from '../../fixtures/model-builders/whisper.js';
import { OrtRuntime, type OrtSession } from '../../../src/inference/runtime/ort-runtime.js';
import { DecoderRun, ENCODER_OUT } from '../../../src/inference/backends/onnx/seq2seq.js';
import { TextTokenizer } from '../../../src/inference/backends/onnx/tokenizer.js';
import { whisperTokens, type WhisperTokens } from '../../../src/inference/backends/onnx/whisper/tokens.js';
import { applyWhisperRules, decodeWindow, defineWhisperDecoding } from '../../../src/inference/backends/onnx/whisper/decode.js';
import { Rng } from '../../fixtures/model-builders/rng.js';

let modelsDir: string;
let runtime: OrtRuntime;
let encoder: OrtSession;
let decoder: OrtSession;
let t: WhisperTokens;

const shape = { heads: TINY_WHISPER.heads, headDim: TINY_WHISPER.hidden / TINY_WHISPER.heads };
const features = () => ({ input_features: { type: 'float32' as const, dims: [1, 80, 3000], data: new Rng(5).normals(80 * 3000, 1) } });

async function encoded(): Promise<DecoderRun> {
  const run = new DecoderRun(runtime, decoder, shape);
  await run.encode(encoder, features());
  return run;
}

const maxAbsDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);
const lastRow = (logits: Float32Array, vocab: number) => logits.slice(logits.length - vocab);

beforeAll(async () => {
  modelsDir = buildTestModels(['whisper-tiny']);
  const dir = path.join(modelsDir, 'whisper-tiny');
  runtime = new OrtRuntime();
  defineWhisperDecoding(runtime);
  encoder = await runtime.load(path.join(dir, 'onnx', 'encoder_model.onnx'));
  decoder = await runtime.load(path.join(dir, 'onnx', 'decoder_model_merged.onnx'), { colocateWith: encoder });
  const generation = JSON.parse(readFileSync(path.join(dir, 'generation_config.json'), 'utf8')) as Record<string, unknown>;
  t = whisperTokens(await TextTokenizer.fromDir(dir), generation);
});

afterAll(async () => {
  await runtime?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

describe('whisper merged decoder', () => {
  it('has the input and output names of the onnx-community export', () => {
    for (let l = 0; l < TINY_WHISPER.decoderLayers; l++) {
      for (const side of ['decoder', 'encoder']) {
        for (const kv of ['key', 'value']) {
          expect(decoder.inputNames).toContain(`past_key_values.${l}.${side}.${kv}`);
          expect(decoder.outputNames).toContain(`present.${l}.${side}.${kv}`);
        }
      }
    }
    expect(decoder.inputNames).toEqual(expect.arrayContaining(['input_ids', 'encoder_hidden_states', 'use_cache_branch']));
    expect(decoder.outputNames[0]).toBe('logits');
  });

  it('computes the cross-attention keys/values once: cached steps equal a full recomputation', async () => {
    const run = await encoded();
    const sequence = [t.sot, t.languages.get('en')!, t.transcribe, 11, 12, 13];
    let cached = await run.step(sequence.slice(0, 3));
    for (const id of sequence.slice(3)) cached = await run.step([id]);
    run.resetCache();
    // No cache: every position and the cross-attention keys/values from encoder_hidden_states.
    const full = await run.step(sequence);
    expect(maxAbsDiff(lastRow(cached.logits, cached.vocab), lastRow(full.logits, full.vocab))).toBeLessThan(1e-3);
    await run.close();
  });

  it('does not read encoder_hidden_states once the cache is in use', async () => {
    const run = await encoded();
    await run.step([t.sot, t.languages.get('en')!, t.transcribe]);
    const feeds: Record<string, unknown> = {
      input_ids: { type: 'int64', dims: [1, 1], data: BigInt64Array.from([11n]) },
      // Garbage encoder states: a cached step must take the cross-attention keys/values from the cache.
      encoder_hidden_states: { type: 'float32', dims: [1, 1500, TINY_WHISPER.hidden], data: new Float32Array(1500 * TINY_WHISPER.hidden).fill(7) },
      use_cache_branch: { type: 'bool', dims: [1], data: new Uint8Array([1]) },
    };
    for (const name of run.pastNames) feeds[name] = { retained: name };
    const garbage = await decoder.run(feeds as never, { state: run.state, fetch: ['logits'] });
    const real = await run.step([11]);
    expect(maxAbsDiff(garbage.logits!.data as Float32Array, real.logits)).toBe(0);
    expect(ENCODER_OUT).toBe('encoder_out');
    await run.close();
  });

  it('decodes a window in the worker exactly as the step-by-step reference does', async () => {
    const run = await encoded();
    const prefix = [t.startOfPrev, 20, 21, 22, t.sot, t.languages.get('en')!, t.transcribe];
    const sotIndex = 4;
    // Reference: one message per step, rules and argmax on this thread.
    const first = await run.step(prefix);
    const atSot = first.logits.subarray(sotIndex * first.vocab, (sotIndex + 1) * first.vocab);
    const max = Math.max(...atSot);
    const noSpeech = Math.exp(atSot[t.noSpeech]! - max) / atSot.reduce((s, v) => s + Math.exp(v - max), 0);
    let logits = lastRow(first.logits, first.vocab);
    const tokens: number[] = [];
    let sumLogprob = 0;
    for (let i = 0; i < 40; i++) {
      applyWhisperRules(logits, tokens, t);
      let best = 0;
      for (let j = 1; j < logits.length; j++) if (logits[j]! > logits[best]!) best = j;
      let sum = 0;
      for (const l of logits) sum += Math.exp(l - logits[best]!);
      sumLogprob += -Math.log(sum);
      if (best === t.eot) break;
      tokens.push(best);
      if (i === 39) break;
      logits = (await run.step([best])).logits.slice();
    }
    const window = await decodeWindow(runtime, run, prefix, sotIndex, t, { temperature: 0, maxTokens: 40 });
    expect(window.tokens).toEqual(tokens);
    expect(window.tokens.length).toBeGreaterThan(0);
    expect(window.sumLogprob).toBeCloseTo(sumLogprob, 6);
    expect(window.noSpeechProb).toBeCloseTo(noSpeech, 9);
    expect(window.steps).toBe(Math.min(40, tokens.length + 1));
    await run.close();
  });

  it('stops a window between two steps when the call is cancelled', async () => {
    const run = await encoded();
    const controller = new AbortController();
    controller.abort();
    await expect(
      decodeWindow(runtime, run, [t.sot, t.languages.get('en')!, t.transcribe], 0, t, { temperature: 0, maxTokens: 40, signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'cancelled' });
    await run.close();
  });
});
