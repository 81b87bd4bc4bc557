/**
 * Models the operator names in sluice.yaml: any valid id, served by an upstream under the
 * kind it declares (chat, embeddings, moderation), priced as declared, listed with the
 * catalog, answering on its routes (batches included); a catalog id declared again is
 * replaced, and the start-up log says so; bad ids stop start-up naming the key.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { tempDir } from '../../helpers/databases.js';
import { runSluice } from '../../helpers/cli.js';
import { builtEntry } from '../../helpers/built.js';
import { fileLines, jsonl, startBatch, waitForBatch, isTerminal } from '../batches/support/batch-helpers.js';
import { usageOf } from './setup.js';

function configFrom(yaml: string) {
  const dir = tempDir('sluice-declared-');
  const file = path.join(dir, 'sluice.yaml');
  writeFileSync(file, yaml);
  return { dir, env: { DATA_DIR: dir, SLUICE_CONFIG: file } };
}

const problemsOf = (yaml: string): string[] => {
  const { dir, env } = configFrom(yaml);
  try {
    loadConfig(env, dir);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

const declaredYaml = (baseUrl: string) => `models:
  my-own-model:
    base_url: ${baseUrl}
    upstream_model: llama3.2:3b
    price: {input_per_million_usd: 2, output_per_million_usd: 10}
  my-embedder:
    kind: embeddings
    base_url: ${baseUrl}
  my-moderator:
    kind: moderation
    base_url: ${baseUrl}
  gpt-oss-120b:
    kind: embeddings
    base_url: ${baseUrl}
batches:
  retry_base_ms: 20
`;

describe('declaring a model in sluice.yaml', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let key: string;
  let projectId: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    server = await startTestServer({ yaml: declaredYaml(upstream.baseUrl), startWorkers: true });
    ({ key, projectId } = await server.newTenant());
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  it('lists declared models after the catalog in GET /v1/models, and retrieves one by id', async () => {
    const list = await call(server.baseUrl, 'GET', '/v1/models', { key });
    const ids: string[] = list.body.data.map((m: { id: string }) => m.id);
    expect(ids.slice(-3)).toEqual(['my-own-model', 'my-embedder', 'my-moderator']);
    expect(ids).toContain('gpt-oss-120b');
    expect(list.body.models).toContainEqual({
      name: 'my-own-model',
      description: 'chat model, served on /v1/chat/completions, /v1/responses',
      release_date: '2026-01-01',
    });
    const one = await call(server.baseUrl, 'GET', '/v1/models/MY-OWN-MODEL', { key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: 'my-own-model', object: 'model', owned_by: 'sluice' });
  });

  it('answers chat completions through the upstream under upstream_model, billed at the declared price', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
    const before = upstream.count('/chat/completions');
    const chat = await client.chat.completions.create({ model: 'my-own-model', messages: [{ role: 'user', content: 'Hello' }] });
    expect(chat.model).toBe('my-own-model');
    expect(chat.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    const sent = upstream.requests.filter((r) => r.path === '/chat/completions')[before]!;
    expect(sent.body.model).toBe('llama3.2:3b');
    const record = (await usageOf(server, projectId)).find((r) => r.requestId === sent.headers['x-request-id']);
    // 11 input tokens at $2/M + 7 output tokens at $10/M = 22 + 70 micro-dollars.
    expect(record).toMatchObject({ model: 'my-own-model', inputTokens: 11, outputTokens: 7, costMicros: 92 });
  });

  it('answers /v1/responses for a chat model, embeddings and moderations for theirs', async () => {
    const responses = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: 'my-own-model', input: 'Hi' } });
    expect(responses.status).toBe(200);
    expect(responses.body.output_text ?? responses.body.output[0].content[0].text).toBe('Hello from the fake upstream.');
    const embeddings = await call(server.baseUrl, 'POST', '/v1/embeddings', { key, body: { model: 'my-embedder', input: ['a', 'b'] } });
    expect(embeddings.status).toBe(200);
    expect(embeddings.body.data).toHaveLength(2);
    expect(embeddings.body.model).toBe('my-embedder');
    const moderation = await call(server.baseUrl, 'POST', '/v1/moderations', { key, body: { model: 'my-moderator', input: 'hello' } });
    expect(moderation.status).toBe(200);
    expect(moderation.body.model).toBe('my-moderator');
    expect(upstream.requests.at(-1)).toMatchObject({ path: '/moderations', body: { model: 'my-moderator' } });
  });

  it('refuses a declared model on a route its kind does not serve, saying where it is served', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'my-embedder', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'Model my-embedder is not supported on /v1/chat/completions; it is served on /v1/embeddings',
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
  });

  it('a catalog id declared again is replaced: gpt-oss-120b now embeds and no longer chats', async () => {
    const embeddings = await call(server.baseUrl, 'POST', '/v1/embeddings', { key, body: { model: 'gpt-oss-120b', input: 'x' } });
    expect(embeddings.status).toBe(200);
    const chat = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toBe('Model gpt-oss-120b is not supported on /v1/chat/completions; it is served on /v1/embeddings');
  });

  it('runs a batch of chat lines on a declared model', async () => {
    const line = (id: string) => ({
      custom_id: id,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'my-own-model', messages: [{ role: 'user', content: id }] },
    });
    const { batch } = await startBatch(server.baseUrl, key, jsonl([line('a'), line('b')]));
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const lines = await fileLines(server.baseUrl, key, done.output_file_id);
    expect(lines.map((l) => [l.custom_id, l.response.body.model])).toEqual([
      ['a', 'my-own-model'],
      ['b', 'my-own-model'],
    ]);
  });
});

describe('sluice models list', () => {
  it('shows declared models with their kind and upstream', () => {
    const { dir, env } = configFrom('models:\n  my-own-model:\n    base_url: http://127.0.0.1:9/v1\n');
    const result = runSluice(['models', 'list', '--json'], { cwd: dir, env });
    expect(result.status).toBe(0);
    const rows = JSON.parse(result.stdout) as Array<{ id: string; task: string; backend: string }>;
    expect(rows.at(-1)).toMatchObject({ id: 'my-own-model', task: 'chat', backend: 'openai' });
  });
});

describe('declared model ids and keys are checked at start-up', () => {
  it.each([
    ['an id with a slash', 'meta/llama', 'models."meta/llama": a model id starts with a letter or digit and has only letters, digits, ".", "_", "-" and ":"'],
    ['an id starting with a dash', '-x', 'models."-x": a model id starts with a letter or digit and has only letters, digits, ".", "_", "-" and ":"'],
    ['a 129-character id', 'a'.repeat(129), `models."${'a'.repeat(129)}": a model id is 1 to 128 characters (this one has 129)`],
    ['constructor', 'constructor', 'models."constructor": "constructor" is the name of a JavaScript object member and cannot be a model id'],
    ['toString', 'toString', 'models."toString": "toString" is the name of a JavaScript object member and cannot be a model id'],
    ['__proto__', '__proto__', 'models."__proto__": a model id starts with a letter or digit and has only letters, digits, ".", "_", "-" and ":"'],
  ])('refuses %s', (_name, id, problem) => {
    expect(problemsOf(`models:\n  ${JSON.stringify(id)}:\n    base_url: http://127.0.0.1:9/v1\n`)).toEqual([problem]);
  });

  it('accepts an Ollama-style id with a tag', () => {
    const { dir, env } = configFrom('models:\n  "llama3.2:3b":\n    base_url: http://127.0.0.1:11434/v1\n');
    const config = loadConfig(env, dir);
    expect(config.models['llama3.2:3b']).toMatchObject({ declared: true, entry: { task: 'chat', routes: ['chat', 'responses'] } });
    expect(config.models['llama3.2:3b']!.price).toEqual({ inputPerMillionUsd: 0, outputPerMillionUsd: 0 });
  });

  it('needs a base_url, an upstream backend, and one spelling per id', () => {
    expect(problemsOf('models:\n  mine:\n    upstream_model: x\n')).toEqual([
      'models.mine.base_url: required: the OpenAI-compatible server that serves mine (e.g. http://127.0.0.1:11434/v1 for Ollama)',
    ]);
    expect(problemsOf('models:\n  mine:\n    backend: onnx\n    base_url: http://127.0.0.1:9/v1\n')).toEqual([
      'models.mine.backend: a model id outside the catalog is served by an upstream (backend: openai); the in-process onnx runtime serves catalog ids only',
    ]);
    expect(problemsOf('models:\n  mine:\n    base_url: http://a/v1\n  MINE:\n    base_url: http://b/v1\n')).toEqual([
      'models.MINE: the same model as models.mine (ids match case-insensitively)',
    ]);
    expect(problemsOf('models:\n  mine:\n    kind: images\n    base_url: http://a/v1\n')).toEqual([
      'models.mine.kind: must be one of chat, embeddings, moderation, got "images"',
    ]);
  });

  it('notes each catalog model sluice.yaml overrides or replaces', () => {
    const { dir, env } = configFrom(
      'models:\n  gpt-oss-120b:\n    kind: embeddings\n    base_url: http://127.0.0.1:9/v1\n  glm-5.2:\n    base_url: http://127.0.0.1:9/v1\n',
    );
    expect(loadConfig(env, dir).modelNotices).toEqual([
      'models.gpt-oss-120b in sluice.yaml replaces the catalog model gpt-oss-120b: now kind embeddings, served by http://127.0.0.1:9/v1',
      'models.glm-5.2 in sluice.yaml overrides the catalog defaults of glm-5.2 (base_url)',
    ]);
  });

  it('the server logs the replacement at start-up', async () => {
    const { dir, env } = configFrom('models:\n  gpt-oss-120b:\n    kind: embeddings\n    base_url: http://127.0.0.1:9/v1\n');
    const child = spawn(process.execPath, [builtEntry('src/main.ts')], {
      cwd: dir,
      env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SLUICE_WORKERS: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const seen = await new Promise<string>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Server listening')) resolve(out);
      });
      child.on('close', () => resolve(out));
    });
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('close', resolve));
    const messages = seen.trim().split('\n').map((l) => JSON.parse(l).msg as string);
    expect(messages).toContain('models.gpt-oss-120b in sluice.yaml replaces the catalog model gpt-oss-120b: now kind embeddings, served by http://127.0.0.1:9/v1');
  });
});
