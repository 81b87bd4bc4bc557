/**
 * Errors that name the right fix: every 503 for a known configuration state says that
 * state and its one remedy, under a type that is not internal_error, and is logged as a
 * warning without a stack; malformed JSON says where; a taken port is one line naming
 * PORT/HOST and exit 69; `sluice --version`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { tempDir } from '../../helpers/databases.js';
import { runSluice } from '../../helpers/cli.js';
import { builtEntry } from '../../helpers/built.js';

const logLines: Array<Record<string, unknown>> = [];
const logSink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let server: TestServer;
let key: string;

beforeAll(async () => {
  const empty = path.join(tempDir('sluice-empty-models-'), 'models');
  mkdirSync(empty);
  server = await startTestServer({ env: { MODELS_DIR: empty }, overrides: { logger: pino({ level: 'info' }, logSink) } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});
afterAll(() => server.close());

const post = (route: string, body: unknown) => call(server.baseUrl, 'POST', route, { key, body });
const chat = (model: string) => post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });

const notAvailable = (message: string) => ({ error: { message, type: 'invalid_request_error', code: 'model_not_available', param: 'model' } });

describe('503 model_not_available names the state and its one remedy', () => {
  it('a classifier pack whose backbone is missing: the one pull command, no nested brackets', async () => {
    const res = await post('/v1/moderations', { input: 'hello' });
    expect(res.status).toBe(503);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.body).toEqual(
      notAvailable(
        'Model zlm-v1-moderation-edge is not available: its backbone all-minilm-l6-v2 is not installed, missing config.json, tokenizer.json, ' +
          'onnx/model.onnx; run `sluice models pull zlm-v1-moderation-edge` (it pulls all-minilm-l6-v2)',
      ),
    );
    expect(res.body.error.message).not.toMatch(/\([^)]*\(/);
  });

  it('the same pack on the decision route', async () => {
    const body = { model: 'zlm-v1-iab-classify-edge', state: 'x', questions: { q: { type: 'noul', instructions: 'Is it about cars?' } } };
    const res = await post('/v1/systemone', body);
    expect(res.status).toBe(503);
    expect(res.body).toEqual(
      notAvailable(
        'Model zlm-v1-iab-classify-edge is not available: its backbone all-minilm-l6-v2 is not installed, missing config.json, tokenizer.json, ' +
          'onnx/model.onnx; run `sluice models pull zlm-v1-iab-classify-edge` (it pulls all-minilm-l6-v2)',
      ),
    );
  });

  it('a GGUF model without its file: pull it', async () => {
    const res = await chat('LFM2.5-1.2B-Instruct');
    expect(res.body).toEqual(
      notAvailable(
        'Model LFM2.5-1.2B-Instruct is not available: no .gguf file in its model directory; run `sluice models pull LFM2.5-1.2B-Instruct`',
      ),
    );
  });

  it('an upstream model without a base_url: set it', async () => {
    const res = await chat('gpt-oss-120b');
    expect(res.status).toBe(503);
    expect(res.body).toEqual(
      notAvailable(
        'Model gpt-oss-120b is not available: it has no upstream; set models.gpt-oss-120b.base_url in sluice.yaml to an OpenAI-compatible server and restart',
      ),
    );
  });

  it('an ONNX model without its files: pull it, without server paths', async () => {
    const res = await post('/v1/embeddings', { model: 'bge-small-en-v1.5', input: 'x' });
    expect(res.body.error.message).toMatch(
      /^Model bge-small-en-v1\.5 is not available: missing from its model directory: config\.json, .+; run `sluice models pull bge-small-en-v1\.5`$/,
    );
    expect(res.body.error.message).not.toContain(server.core.config.modelsDir);
  });

  it('is logged as a warning with its reason, never at error level or with a stack', () => {
    const refusals = logLines.filter((l) => l.msg === 'request refused: not available');
    expect(refusals.length).toBeGreaterThanOrEqual(5);
    expect(refusals.every((l) => l.level === 40 && l.code === 'model_not_available' && typeof l.reason === 'string')).toBe(true);
    expect(logLines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(logLines.some((l) => JSON.stringify(l).includes('"stack"'))).toBe(false);
  });
});

describe('malformed JSON says where', () => {
  const raw = (text: string) =>
    call(server.baseUrl, 'POST', '/v1/chat/completions', { key, headers: { 'content-type': 'application/json' }, rawBody: text });

  it.each([
    ['{"model": "x",\n  "messages": []\n  "n": 1}', "Invalid JSON body at line 3, column 3: Expected ',' or '}' after the property value, found a string"],
    ['{"model": "x",}', "Invalid JSON body at line 1, column 15: Expected a property name in double quotes after ',', found '}'; JSON allows no trailing comma"],
    ['{"model": ', 'Invalid JSON body at line 1, column 11: Expected a value, found the end of the input'],
  ])('%j', async (text, message) => {
    const res = await raw(text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_json', param: null } });
  });
});

describe('the command line', { timeout: 120_000 }, () => {
  it('sluice --version prints the package version', () => {
    const result = runSluice(['--version'], { cwd: tempDir('sluice-version-'), env: {} });
    expect(result).toEqual({ status: 0, stdout: '0.1.0\n', stderr: '' });
  });

  it('a taken port is one line naming PORT and HOST, exit 69, from npm start and from sluice serve', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const dir = tempDir('sluice-port-');
      const env = { ...process.env, DATA_DIR: dir, SLUICE_CONFIG: '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent' };
      const line = `error: cannot listen on 127.0.0.1:${port}: the port is already in use by another process; set PORT to a free port (or HOST to another address)\n`;
      for (const args of [[builtEntry('src/main.ts')], [builtEntry('src/cli/main.ts'), 'serve']]) {
        const result = spawnSync(process.execPath, args, { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
        expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 69, stderr: line });
      }
    } finally {
      holder.close();
    }
  });
});
