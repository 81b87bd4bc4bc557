/** `sluice models pull` against a fake Hub on loopback, and `sluice models list`. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { runCli } from '../../../src/cli/main.js';
import { pullModel, type PullEvent } from '../../../src/inference/hub/pull.js';
import { tempDir } from '../../helpers/databases.js';
import { startFakeHub, type FakeHub, type FakeHubFile } from './fake-hub.js';

const text = (s: string) => Buffer.from(s);
const ONNX = randomBytes(200_000);
const ONNX_FILES: FakeHubFile[] = [
  { path: 'config.json', content: text('{"hidden_size":384}'), lfs: false },
  { path: 'tokenizer.json', content: text('{"version":"1.0"}'), lfs: false },
  { path: 'onnx/model.onnx', content: ONNX, lfs: true },
  { path: 'onnx/model_fp16.onnx', content: randomBytes(1000), lfs: true },
  { path: 'README.md', content: text('# MiniLM'), lfs: false },
];
const GGUF_FILES: FakeHubFile[] = [
  { path: 'config.json', content: text('{}'), lfs: false },
  { path: 'LFM2.5-1.2B-Instruct-Q8_0.gguf', content: randomBytes(3000), lfs: true },
  { path: 'LFM2.5-1.2B-Instruct-Q4_K_M.gguf', content: randomBytes(2000), lfs: true },
  { path: 'LFM2.5-1.2B-Instruct-F16.gguf', content: randomBytes(4000), lfs: true },
];

let hub: FakeHub;

beforeAll(async () => {
  hub = await startFakeHub({ 'Xenova/all-MiniLM-L6-v2': ONNX_FILES, 'LiquidAI/LFM2.5-1.2B-Instruct-GGUF': GGUF_FILES, 'acme/classifier': ONNX_FILES });
});
afterAll(async () => hub.close());
afterEach(() => hub.reset());

function setup() {
  const dir = tempDir('sluice-pull-');
  const env = { DATA_DIR: dir, HF_ENDPOINT: hub.endpoint, HF_TOKEN: 'hf_test_token' };
  return { dir, env, config: loadConfig(env, dir), modelDir: path.join(dir, 'models', 'all-minilm-l6-v2') };
}

const listTree = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();

describe('models pull', () => {
  it('downloads the files into the model directory in the Hub layout, verified, skipping weight variants', async () => {
    const { config, modelDir } = setup();
    const events: PullEvent[] = [];
    const result = await pullModel(config, 'all-minilm-l6-v2', {}, (e) => events.push(e));
    expect(result).toEqual({
      model: 'all-minilm-l6-v2',
      repo: 'Xenova/all-MiniLM-L6-v2',
      dir: modelDir,
      downloaded: ['config.json', 'tokenizer.json', 'onnx/model.onnx', 'README.md'],
      present: [],
      bytes: 19 + 17 + 200_000 + 8,
    });
    expect(listTree(modelDir)).toEqual(['README.md', 'config.json', 'onnx/model.onnx', 'tokenizer.json']);
    expect(readFileSync(path.join(modelDir, 'onnx/model.onnx')).equals(ONNX)).toBe(true);
    expect(readFileSync(path.join(modelDir, 'config.json'), 'utf8')).toBe('{"hidden_size":384}');
    // Paginated listing (2 per page), then downloads through the CDN redirect; the token on every call.
    expect(hub.requests.filter((r) => r.url.includes('/tree/main')).length).toBe(3);
    expect(hub.requests.every((r) => r.authorization === 'Bearer hf_test_token')).toBe(true);
    expect(hub.requests.some((r) => r.url.includes('model_fp16'))).toBe(false);
    const progress = events.filter((e): e is Extract<PullEvent, { type: 'progress' }> => e.type === 'progress').map((e) => e.doneBytes);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(result.bytes);
  });

  it('finds complete files already present and downloads nothing', async () => {
    const { config } = setup();
    await pullModel(config, 'all-minilm-l6-v2');
    hub.requests.length = 0;
    const again = await pullModel(config, 'all-minilm-l6-v2');
    expect(again.downloaded).toEqual([]);
    expect(again.present).toEqual(['config.json', 'tokenizer.json', 'onnx/model.onnx', 'README.md']);
    expect(hub.requests.filter((r) => !r.url.includes('/tree/'))).toEqual([]);
  });

  it('resumes with a Range request after the connection drops mid-file', async () => {
    const { config, modelDir } = setup();
    hub.cutAfter('onnx/model.onnx', 50_000);
    await pullModel(config, 'all-minilm-l6-v2');
    const ranges = hub.requests.filter((r) => r.url.includes('model.onnx')).map((r) => r.range ?? null);
    expect(ranges).toEqual([null, null, 'bytes=50000-', 'bytes=50000-']); // resolve + CDN, twice
    expect(readFileSync(path.join(modelDir, 'onnx/model.onnx')).equals(ONNX)).toBe(true);
  });

  it('resumes a .part file left by an earlier run', async () => {
    const { config, modelDir } = setup();
    mkdirSync(path.join(modelDir, 'onnx'), { recursive: true });
    writeFileSync(path.join(modelDir, 'onnx/model.onnx.part'), ONNX.subarray(0, 1000));
    await pullModel(config, 'all-minilm-l6-v2');
    expect(hub.requests.filter((r) => r.url.includes('model.onnx')).map((r) => r.range)).toEqual(['bytes=1000-', 'bytes=1000-']);
    expect(readFileSync(path.join(modelDir, 'onnx/model.onnx')).equals(ONNX)).toBe(true);
    expect(existsSync(path.join(modelDir, 'onnx/model.onnx.part'))).toBe(false);
  });

  it('refuses an LFS file whose sha256 does not match, and keeps nothing of it', async () => {
    const { config, modelDir } = setup();
    hub.corrupt('onnx/model.onnx');
    await expect(pullModel(config, 'all-minilm-l6-v2')).rejects.toThrow(/^onnx\/model\.onnx: sha256 mismatch \(expected [0-9a-f]{64}, got [0-9a-f]{64}\); the download was discarded$/);
    expect(existsSync(path.join(modelDir, 'onnx/model.onnx'))).toBe(false);
    expect(existsSync(path.join(modelDir, 'onnx/model.onnx.part'))).toBe(false);
  });

  it('verifies git-stored files by their blob sha1', async () => {
    const { config } = setup();
    const local = await startFakeHub({ 'acme/bad': [{ path: 'config.json', content: text('{"a":1}'), lfs: false }] });
    local.corrupt('config.json');
    try {
      const bad = loadConfig({ DATA_DIR: config.dataDir, HF_ENDPOINT: local.endpoint }, config.dataDir);
      await expect(pullModel(bad, 'all-minilm-l6-v2', { repo: 'acme/bad' })).rejects.toThrow(/^config\.json: git sha1 mismatch/);
    } finally {
      await local.close();
    }
  });

  it('takes only the files matching --include globs', async () => {
    const { config, modelDir } = setup();
    const result = await pullModel(config, 'all-minilm-l6-v2', { include: ['*.json'] });
    expect(result.downloaded).toEqual(['config.json', 'tokenizer.json']);
    expect(listTree(modelDir)).toEqual(['config.json', 'tokenizer.json']);
  });

  it('takes one quantisation (Q4_K_M) of a GGUF repository', async () => {
    const { config } = setup();
    const result = await pullModel(config, 'LFM2.5-1.2B-Instruct');
    expect(result.repo).toBe('LiquidAI/LFM2.5-1.2B-Instruct-GGUF');
    expect(result.downloaded).toEqual(['config.json', 'LFM2.5-1.2B-Instruct-Q4_K_M.gguf']);
  });

  it('explains a missing repository and a model without a known one', async () => {
    const { config } = setup();
    await expect(pullModel(config, 'all-minilm-l6-v2', { repo: 'acme/missing' })).rejects.toThrow(
      `Repository acme/missing (revision main) was not found on ${hub.endpoint}`,
    );
    await expect(pullModel(config, 'zlm-v1-moderation-edge')).rejects.toThrow(
      'No public Hub repository is known for zlm-v1-moderation-edge; pass --repo <owner/name>',
    );
    await expect(pullModel(config, 'no-such-model')).rejects.toThrow('Unknown model no-such-model; `sluice models list` shows every id');
  });
});

describe('the sluice command', () => {
  const saved = { ...process.env };
  let stdout: string[];
  let stderr: string[];

  function capture() {
    stdout = [];
    stderr = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      stderr.push(args.join(' '));
    });
  }

  afterEach(() => {
    vi.restoreAllMocks();
    process.env = { ...saved };
  });

  it('`models pull` prints the result as JSON and one line per file on a non-terminal', async () => {
    const { dir, env, modelDir } = setup();
    Object.assign(process.env, env, { LOG_LEVEL: 'silent' });
    capture();
    const code = await runCli(['models', 'pull', 'all-minilm-l6-v2', '--include', 'config.json', 'onnx/*']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout.join(''))).toMatchObject({ model: 'all-minilm-l6-v2', dir: modelDir, downloaded: ['config.json', 'onnx/model.onnx', 'onnx/model_fp16.onnx'] });
    expect(stderr).toEqual([
      `Xenova/all-MiniLM-L6-v2 → ${modelDir}: 3 files, 0.2 MB`,
      'downloaded: config.json',
      'downloaded: onnx/model.onnx',
      'downloaded: onnx/model_fp16.onnx',
    ]);
    expect(readdirSync(path.join(dir, 'models'))).toEqual(['all-minilm-l6-v2']);
  });

  it('`models pull` of a GGUF model names the runtime it runs on when that is missing (off a terminal, no question)', async () => {
    const { dir, env } = setup();
    Object.assign(process.env, env, { LOG_LEVEL: 'silent', SLUICE_RUNTIMES_DIR: path.join(dir, 'runtimes') });
    capture();
    expect(await runCli(['models', 'pull', 'LFM2.5-1.2B-Instruct'])).toBe(0);
    expect(JSON.parse(stdout.join(''))).toMatchObject({ model: 'LFM2.5-1.2B-Instruct', downloaded: ['config.json', 'LFM2.5-1.2B-Instruct-Q4_K_M.gguf'] });
    expect(stderr.at(-1)).toBe('LFM2.5-1.2B-Instruct runs on the GGUF runtime, which is not installed: run `sluice runtimes add gguf`');
  });

  it('`models pull` fails with a one-line error and exit code 1', async () => {
    const { env } = setup();
    Object.assign(process.env, env, { LOG_LEVEL: 'silent' });
    capture();
    // (A zlm-* id is a classifier pack: `models pull` assembles it, see test/integration/classifier.)
    expect(await runCli(['models', 'pull', 'gpt-oss-120b'])).toBe(1);
    expect(stderr).toEqual(['error: No public Hub repository is known for gpt-oss-120b; pass --repo <owner/name>']);
  });

  it('`models list` shows each model, its backend, and whether it can run', async () => {
    const dir = tempDir('sluice-list-');
    writeFileSync(path.join(dir, 'sluice.yaml'), 'models:\n  gpt-oss-120b: { backend: openai, base_url: "http://127.0.0.1:9/v1" }\n');
    Object.assign(process.env, { DATA_DIR: dir, SLUICE_CONFIG: path.join(dir, 'sluice.yaml'), LOG_LEVEL: 'silent' });
    capture();
    expect(await runCli(['models', 'list', '--json'])).toBe(0);
    const rows = JSON.parse(stdout.join('')) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.id)).toEqual(Object.keys(loadConfig(process.env, dir).models));
    // Nothing listens on port 9: the probe finds it unreachable (test/integration/http/upstream-readiness.test.ts).
    expect(rows.find((r) => r.id === 'gpt-oss-120b')).toMatchObject({ id: 'gpt-oss-120b', task: 'chat', backend: 'openai', ready: false });
    expect(rows.find((r) => r.id === 'gpt-oss-120b')!.detail).toMatch(/^upstream http:\/\/127\.0\.0\.1:9\/v1 unreachable since .+ \(ECONNREFUSED\)$/);
    expect(rows.find((r) => r.id === 'deepseek-v4-flash')).toEqual({ id: 'deepseek-v4-flash', task: 'chat', backend: 'openai', ready: false, price: expect.any(Object), detail: 'it has no upstream; set models.deepseek-v4-flash.base_url in sluice.yaml to an OpenAI-compatible server and restart' });

    stdout = [];
    expect(await runCli(['models', 'list'])).toBe(0);
    const lines = stdout.join('').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^MODEL\s+TASK\s+BACKEND\s+READY\s+PRICE IN\/OUT PER M\s+DETAIL$/);
    expect(lines.find((l) => l.startsWith('gpt-oss-120b '))).toMatch(/^gpt-oss-120b\s+chat\s+openai\s+no\s+\$[\d.]+\/\$[\d.]+\s+upstream http:\/\/127\.0\.0\.1:9\/v1 unreachable since /);
    expect(lines).toHaveLength(rows.length + 1);
  });
});
