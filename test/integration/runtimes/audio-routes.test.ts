/**
 * POST /v1/audio/transcriptions and /translations end to end: multipart upload, ffmpeg
 * decoding of every format, the Whisper runtime on a generated random-weight model,
 * response formats, limits and errors, metering.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { audioDir, makeAudio } from '../../fixtures/audio/generate.js';

let server: TestServer;
let key: string;
let dir: string;
let modelsDir: string;

beforeAll(async () => {
  modelsDir = buildTestModels(['whisper-tiny']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
  dir = audioDir();
});

afterAll(async () => {
  await server?.close();
  for (const d of [dir, modelsDir]) if (d) rmSync(d, { recursive: true, force: true });
});

type Fields = Record<string, string | string[]>;

async function post(route: 'transcriptions' | 'translations', file: { path?: string; bytes?: Buffer; name: string } | null, fields: Fields, auth: Record<string, string> = { 'x-api-key': key }) {
  const form = new FormData();
  if (file) form.append('file', new Blob([file.bytes ?? readFileSync(file.path!)]), file.name);
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) form.append(name, v);
  const res = await fetch(`${server.baseUrl}/v1/audio/${route}`, { method: 'POST', headers: auth, body: form });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text formats */
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body };
}

const tone = (name: string, seconds = 3, hz: number | 'silence' = 440) => ({ path: makeAudio(dir, { name, seconds, tone: hz }), name });

describe('POST /v1/audio/transcriptions', () => {
  it('answers json {text} for a wav file', async () => {
    const res = await post('transcriptions', tone('a.wav'), { model: 'whisper-tiny' });
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/application\/json/);
    expect(Object.keys(res.body)).toEqual(['text']);
    expect(typeof res.body.text).toBe('string');
  });

  it('decodes every listed format', async () => {
    for (const ext of ['flac', 'mp3', 'ogg', 'oga', 'webm', 'm4a', 'mp4']) {
      const res = await post('transcriptions', tone(`f.${ext}`, 2), { model: 'whisper-tiny', language: 'en' });
      expect(res.status, ext).toBe(200);
    }
    const mpga = await post('transcriptions', { path: makeAudio(dir, { name: 'g.mp3', seconds: 2, tone: 300 }), name: 'g.mpga' }, { model: 'whisper-tiny' });
    expect(mpga.status).toBe(200);
  });

  it('gives verbose_json segments with monotonic timestamps across 30-second windows, and words', async () => {
    const res = await post('transcriptions', tone('long.flac', 75), {
      model: 'whisper-tiny',
      response_format: 'verbose_json',
      'timestamp_granularities[]': ['segment', 'word'],
    });
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body).toMatchObject({ task: 'transcribe' });
    expect(typeof body.language).toBe('string');
    expect(body.duration).toBeCloseTo(75, 1);
    expect(body.segments.length).toBeGreaterThan(1);
    let last = 0;
    for (const s of body.segments) {
      expect(Object.keys(s).sort()).toEqual(
        ['avg_logprob', 'compression_ratio', 'end', 'id', 'no_speech_prob', 'seek', 'start', 'temperature', 'text', 'tokens'].sort(),
      );
      expect(s.start).toBeGreaterThanOrEqual(last);
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      expect(s.end).toBeLessThanOrEqual(75);
      expect(s.tokens.every((t: unknown) => Number.isInteger(t))).toBe(true);
      last = s.start;
    }
    expect(new Set(body.segments.map((s: any) => s.seek)).size).toBeGreaterThan(1); // decoded in several windows
    expect(body.segments.some((s: any) => s.start >= 30)).toBe(true);
    expect(Array.isArray(body.words)).toBe(true);
    for (const w of body.words) expect(w.end).toBeGreaterThanOrEqual(w.start);
  });

  it('renders text, srt and vtt as text/plain', async () => {
    const file = tone('b.wav', 40);
    const text = await post('transcriptions', file, { model: 'whisper-tiny', response_format: 'text' });
    expect(text.status).toBe(200);
    expect(text.type).toMatch(/text\/plain/);
    const srt = await post('transcriptions', file, { model: 'whisper-tiny', response_format: 'srt' });
    expect(srt.type).toMatch(/text\/plain/);
    if (String(srt.body).trim()) expect(String(srt.body)).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n/);
    const vtt = await post('transcriptions', file, { model: 'whisper-tiny', response_format: 'vtt' });
    expect(String(vtt.body)).toMatch(/^WEBVTT\n/);
  });

  it('accepts Bearer authentication and refuses no key', async () => {
    const file = tone('c.wav', 1);
    expect((await post('transcriptions', file, { model: 'whisper-tiny' }, { authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await post('transcriptions', file, { model: 'whisper-tiny' }, {})).status).toBe(401);
  });

  it('validates the fields', async () => {
    const file = tone('d.wav', 1);
    const cases: [Fields, string][] = [
      [{}, 'model'],
      [{ model: 'whisper-tiny', prompt: 'x'.repeat(4097) }, 'prompt'],
      [{ model: 'whisper-tiny', temperature: '1.5' }, 'temperature'],
      [{ model: 'whisper-tiny', language: 'xx' }, 'language'],
      [{ model: 'whisper-tiny', response_format: 'xml' }, 'response_format'],
      [{ model: 'whisper-tiny', 'timestamp_granularities[]': 'word' }, 'timestamp_granularities'],
      [{ model: 'LFM2.5-1.2B-Instruct' }, 'model'],
    ];
    for (const [fields, param] of cases) {
      const res = await post('transcriptions', file, fields);
      expect(res.status, JSON.stringify(fields).slice(0, 80)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
    const missing = await post('transcriptions', null, { model: 'whisper-tiny' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('file');
  });

  it('answers 400, never 500, for undecodable, empty and wrongly named files', async () => {
    const junk = await post('transcriptions', { bytes: Buffer.from('this is not audio at all '.repeat(100)), name: 'x.mp3' }, { model: 'whisper-tiny' });
    expect(junk.status).toBe(400);
    expect(junk.body.error.code).toBe('invalid_audio');
    const empty = await post('transcriptions', { bytes: Buffer.alloc(0), name: 'e.wav' }, { model: 'whisper-tiny' });
    expect(empty.status).toBe(400);
    const txt = await post('transcriptions', { bytes: Buffer.from('hello'), name: 'notes.txt' }, { model: 'whisper-tiny' });
    expect(txt.status).toBe(400);
    expect(txt.body.error.code).toBe('invalid_file_format');
    const silentHeader = await post('transcriptions', { bytes: readFileSync(tone('s.wav', 1).path).subarray(0, 44), name: 's.wav' }, { model: 'whisper-tiny' });
    expect(silentHeader.status).toBe(400);
  });

  it('refuses audio over 10 minutes with 400 and files over 25 MB with 413', async () => {
    const long = await post('transcriptions', tone('long.flac', 601, 'silence'), { model: 'whisper-tiny' });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe('audio_too_long');
    const big = path.join(dir, 'big.wav');
    writeFileSync(big, Buffer.alloc(25 * 1024 * 1024 + 10, 1));
    const res = await post('transcriptions', { path: big, name: 'big.wav' }, { model: 'whisper-tiny' });
    expect(res.status).toBe(413);
    expect(res.body.error.message).toMatch(/25 MB/);
  });

  it('meters audio seconds and bills tokens', async () => {
    await post('transcriptions', tone('m.wav', 2), { model: 'whisper-tiny' });
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/sluice_audio_seconds_total\{model="whisper-tiny",route="\/v1\/audio\/transcriptions"\} \d/);
    expect(metrics).toMatch(/sluice_usage_tokens_total\{model="whisper-tiny",direction="input"\} \d/);
  });
});

describe('credit', () => {
  // At the catalog's prices the longest clip (600 s: 30,000 tokens in, 20 windows of 224 out) may cost
  // 824 µ$; a 3-second clip (150 in, 224 out) 15 µ$.
  const balanceOf = async (projectId: string) => (await server.core.projects.getProject(projectId)).balanceMicros;

  it('serves a short clip on credit that does not cover the longest one, holding what the clip may cost', async () => {
    const poor = await server.newTenant({ balanceUsd: 0.0001 }); // 100 µ$
    const res = await post('transcriptions', tone('c.wav', 3), { model: 'whisper-tiny' }, { 'x-api-key': poor.key });
    expect(res.status).toBe(200);
    const left = await balanceOf(poor.projectId);
    expect(left).toBeLessThan(100);
    expect(left).toBeGreaterThanOrEqual(100 - 15);

    const poorer = await server.newTenant({ balanceUsd: 0.00001 }); // 10 µ$
    const refused = await post('transcriptions', tone('c.wav', 3), { model: 'whisper-tiny' }, { 'x-api-key': poorer.key });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      message:
        'Insufficient credit: this request may cost up to 0.000015 USD, and the free balance ' +
        '(the balance less the credit held by calls in flight) is 0.000010 USD.',
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      param: null,
    });
    expect(await balanceOf(poorer.projectId)).toBe(10);
  });
});

describe('POST /v1/audio/translations', () => {
  it('translates into English and takes no language', async () => {
    const file = tone('t.wav', 2);
    const res = await post('translations', file, { model: 'whisper-tiny', response_format: 'verbose_json' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ task: 'translate', language: 'english' });
    const withLanguage = await post('translations', file, { model: 'whisper-tiny', language: 'fr' });
    expect(withLanguage.status).toBe(400);
    expect(withLanguage.body.error.param).toBe('language');
  });
});
