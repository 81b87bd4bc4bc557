/**
 * Speech recognition real-time factor on random-weight models of the real whisper-tiny
 * size (d_model 384, 4+4 layers, ~51.8k-token vocabulary) for a 60-second clip:
 *
 * - worst case: the random model rarely ends a window early, so most windows decode
 *   their full 224 tokens (~11 tokens per second of audio), in process and over HTTP
 *   (multipart upload + ffmpeg decode);
 * - realistic decoding: the same model with end-of-text made likelier, so it decodes
 *   about 4 tokens per second of audio, the rate of fast speech (~150 words a minute plus
 *   timestamp tokens).
 *
 * In-process runs go through the Whisper engine on a runtime configured as the backend's,
 * and report where the time went (features, encoder per window, decoder per run).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchRow } from './run.js';
import { buildWhisper, WHISPER_TINY_SIZE } from '../test/fixtures/model-builders/whisper.js';
import { makeAudio } from '../test/fixtures/audio/generate.js';
import { startTestServer } from '../test/helpers/harness.js';
import { FfmpegDecoder } from '../src/adapters/ffmpeg/ffmpeg-decoder.js';
import { OrtRuntime } from '../src/inference/runtime/ort-runtime.js';
import { WhisperEngine } from '../src/inference/backends/onnx/whisper/engine.js';
import type { ModelConfig } from '../src/config/schema.js';

const CLIP_SECONDS = 60;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** End-of-text logit offset that makes the random model decode ~4 tokens per second of audio. */
const REALISTIC_EOT_BIAS = 40;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function inProcess(dir: string, audio: Float32Array) {
  const runtime = new OrtRuntime();
  const engine = await WhisperEngine.load(runtime, dir);
  const params = {
    requestId: 'bench',
    signal: new AbortController().signal,
    model: { id: 'whisper-tiny' } as ModelConfig,
    audio,
    task: 'transcribe' as const,
    language: 'en',
    prompt: null,
    temperature: 0,
    wordTimestamps: false,
  };
  await engine.transcribe({ ...params, audio: audio.subarray(0, 16000) }); // warm up
  const runs: { seconds: number; tokens: number; windows: number; featuresMs: number; encoderMs: number; runMs: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const before = { ...engine.timings };
    const started = performance.now();
    const out = await engine.transcribe(params);
    const seconds = (performance.now() - started) / 1000;
    const t = engine.timings;
    const windows = t.windows - before.windows;
    runs.push({
      seconds,
      tokens: out.usage.outputTokens,
      windows,
      featuresMs: (t.featuresMs - before.featuresMs) / windows,
      encoderMs: (t.encoderMs - before.encoderMs) / windows,
      runMs: (t.decoderMs - before.decoderMs) / (t.decoderRuns - before.decoderRuns),
    });
  }
  await runtime.close();
  const pick = (key: keyof (typeof runs)[number]) => median(runs.map((r) => r[key]));
  return {
    rtf: pick('seconds') / CLIP_SECONDS,
    rtfs: runs.map((r) => (r.seconds / CLIP_SECONDS).toFixed(3)).join(', '),
    tokens: runs[0]!.tokens,
    windows: runs[0]!.windows,
    featuresMs: pick('featuresMs'),
    encoderMs: pick('encoderMs'),
    runMs: pick('runMs'),
  };
}

async function overHttp(modelsDir: string, file: string) {
  const server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
  const { key } = await server.newTenant({ balanceUsd: 100 });
  const send = async () => {
    const form = new FormData();
    form.append('file', new Blob([readFileSync(file)]), 'clip.mp3');
    form.append('model', 'whisper-tiny');
    form.append('language', 'en');
    const res = await fetch(`${server.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    if (res.status !== 200) throw new Error(`transcription answered ${res.status}: ${await res.text()}`);
    await res.text();
  };
  await send();
  let busy = true;
  const health: number[] = [];
  const probe = (async () => {
    while (busy) {
      const t = performance.now();
      await (await fetch(`${server.baseUrl}/healthz`)).text();
      health.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const started = performance.now();
  await send();
  const seconds = (performance.now() - started) / 1000;
  busy = false;
  await probe;
  await server.close();
  health.sort((a, b) => a - b);
  return { seconds, healthP99: health[Math.floor(health.length * 0.99)] ?? NaN };
}

export default async function transcriptionBench(): Promise<BenchRow[]> {
  const clip = makeAudio(mkdtempSync(path.join(tmpdir(), 'bench-audio-')), { name: 'clip.mp3', seconds: CLIP_SECONDS, tone: 440 });
  const { samples } = await new FfmpegDecoder().decode(clip, 600);
  const modelsDir = mkdtempSync(path.join(tmpdir(), 'bench-whisper-'));
  const worstDir = buildWhisper(path.join(modelsDir, 'whisper-tiny'), WHISPER_TINY_SIZE);
  const realisticDir = buildWhisper(mkdtempSync(path.join(tmpdir(), 'bench-whisper-realistic-')), { ...WHISPER_TINY_SIZE, eotBias: REALISTIC_EOT_BIAS });
  const worst = await inProcess(worstDir, samples);
  const realistic = await inProcess(realisticDir, samples);
  const http = await overHttp(modelsDir, clip);
  return [
    {
      name: 'in-process RTF, 60 s clip, worst case',
      value: worst.rtf,
      unit: 'x',
      note: `${worst.tokens} tokens in ${worst.windows} windows; runs ${worst.rtfs}; target ≤ 0.1`,
    },
    { name: '  decoder time per run (one token)', value: worst.runMs, unit: 'ms', note: 'median over the runs, prefix steps included' },
    { name: '  encoder time per window', value: worst.encoderMs, unit: 'ms' },
    { name: '  log-mel features per window', value: worst.featuresMs, unit: 'ms' },
    {
      name: 'in-process RTF, 60 s clip, realistic decoding',
      value: realistic.rtf,
      unit: 'x',
      note: `${realistic.tokens} tokens (${(realistic.tokens / CLIP_SECONDS).toFixed(1)}/s of audio) in ${realistic.windows} windows; runs ${realistic.rtfs}`,
    },
    { name: 'HTTP RTF incl. upload and ffmpeg decode, worst case', value: http.seconds / CLIP_SECONDS, unit: 'x' },
    { name: '/healthz p99 during a transcription', value: http.healthP99, unit: 'ms', note: 'target ≤ 50' },
  ];
}
