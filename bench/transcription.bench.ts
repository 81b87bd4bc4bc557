/**
 * Speech recognition real-time factor on a random-weight model of the real whisper-tiny
 * size (d_model 384, 4+4 layers, 51865-token vocabulary): a 60-second clip, in process
 * and over HTTP (multipart upload + ffmpeg decode). The random model rarely ends a window
 * early, so most windows decode their full 224 tokens: close to the decoder's worst case.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { BenchRow } from './run.js';
import { loadConfig } from '../src/config/load.js';
import { OnnxBackend } from '../src/inference/backends/onnx/index.js';
import { buildWhisper, WHISPER_TINY_SIZE } from '../test/fixtures/model-builders/whisper.js';
import { makeAudio } from '../test/fixtures/audio/generate.js';
import { startTestServer } from '../test/helpers/harness.js';
import { FfmpegDecoder } from '../src/domain/audio/ffmpeg-decoder.js';

const CLIP_SECONDS = 60;

async function inProcess(modelsDir: string, audio: Float32Array) {
  const config = loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'bench-')), MODELS_DIR: modelsDir, LOG_LEVEL: 'silent' });
  const backend = new OnnxBackend(config.runtimes, pino({ level: 'silent' }));
  const params = {
    requestId: 'bench',
    signal: new AbortController().signal,
    model: config.models['whisper-tiny']!,
    audio,
    task: 'transcribe' as const,
    language: 'en',
    prompt: null,
    temperature: 0,
    wordTimestamps: false,
  };
  await backend.transcribe({ ...params, audio: audio.subarray(0, 16000) }); // load and warm up
  const started = performance.now();
  const out = await backend.transcribe(params);
  const seconds = (performance.now() - started) / 1000;
  await backend.close();
  return { seconds, tokens: out.usage.outputTokens, windows: new Set(out.segments.map((s) => s.seek)).size };
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
  buildWhisper(path.join(modelsDir, 'whisper-tiny'), WHISPER_TINY_SIZE);
  const local = await inProcess(modelsDir, samples);
  const http = await overHttp(modelsDir, clip);
  return [
    { name: 'in-process RTF, 60 s clip', value: local.seconds / CLIP_SECONDS, unit: 'x', note: `${local.tokens} tokens in ${local.windows} windows; target ≤ 0.1` },
    { name: 'in-process time per decoded token (all included)', value: (local.seconds * 1000) / local.tokens, unit: 'ms' },
    { name: 'HTTP RTF incl. upload and ffmpeg decode', value: http.seconds / CLIP_SECONDS, unit: 'x' },
    { name: '/healthz p99 during a transcription', value: http.healthP99, unit: 'ms', note: 'target ≤ 50' },
  ];
}
