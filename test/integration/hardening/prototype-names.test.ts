/**
 * Names of Object.prototype members as user input: every table keyed by a request's
 * string (model ids, chat roles, PII categories, GLiNER labels and schema groups, the
 * config's model map) must treat them as unknown names, never as members.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { loadConfig } from '../../../src/config/load.js';
import { tempDir } from '../../helpers/databases.js';
import { byLabel, runPii } from '../../../src/inference/backends/onnx/gliner/pii.js';
import { readSchema } from '../../../src/inference/backends/onnx/gliner/options.js';
import type { GlinerEngine } from '../../../src/inference/backends/onnx/gliner/engine.js';

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.newTenant());
});
afterAll(() => server.close());

const notFoundBody = (model: string) => ({
  error: {
    message: `The model \`${model}\` does not exist or you do not have access to it.`,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
  },
});

describe('model ids named like Object.prototype members', () => {
  const routes: Array<[string, (model: string) => unknown]> = [
    ['/v1/chat/completions', (model) => ({ model, messages: [{ role: 'user', content: 'hi' }] })],
    ['/v1/responses', (model) => ({ model, input: 'hi' })],
    ['/v1/embeddings', (model) => ({ model, input: 'hi' })],
    ['/v1/moderations', (model) => ({ model, input: 'hi' })],
  ];
  for (const [route, body] of routes) {
    it.each(PROTOTYPE_NAMES)(`${route} answers 400 model_not_found for %s`, async (name) => {
      const res = await call(server.baseUrl, 'POST', route, { key, body: body(name) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(notFoundBody(name));
    });
  }

  it.each(PROTOTYPE_NAMES)('GET /v1/models/%s answers 404 model_not_found', async (name) => {
    const res = await call(server.baseUrl, 'GET', `/v1/models/${name}`, { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { message: `The model \`${name}\` does not exist`, type: 'invalid_request_error', code: 'model_not_found', param: 'model' },
    });
  });

  it.each(PROTOTYPE_NAMES)('/v1/audio/transcriptions answers 400 model_not_found for %s', async (name) => {
    const form = new FormData();
    form.set('model', name);
    form.set('file', new Blob([Buffer.alloc(64)], { type: 'audio/wav' }), 'a.wav');
    const res = await fetch(`${server.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(notFoundBody(name));
  });

  it('the config model map has no inherited members', () => {
    const config = loadConfig({ DATA_DIR: tempDir() }, tempDir());
    for (const name of PROTOTYPE_NAMES) expect(config.models[name]).toBeUndefined();
    expect(config.models['gpt-oss-120b']?.id).toBe('gpt-oss-120b');
  });
});

describe('other tables keyed by request strings', () => {
  it.each(PROTOTYPE_NAMES)('a chat message with role %s is a 400 naming the roles', async (role) => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'gpt-oss-120b', messages: [{ role, content: 'hi' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'messages[0].role must be one of system, user, assistant, tool, developer',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param: 'messages[0].role',
    });
  });

  // An engine that finds nothing: these tests are about the tables, not the model.
  const emptyEngine = { extract: () => Promise.resolve([]) } as unknown as GlinerEngine;

  it.each(PROTOTYPE_NAMES)('PII category %s is unknown, not an inherited member', async (name) => {
    await expect(runPii(emptyEngine, 'text', { categories: [name] }, null)).rejects.toMatchObject({
      kind: 'invalid_request',
      param: 'metadata.categories',
      message: expect.stringContaining(`unknown ${name} (known: identity, contact, financial, medical, credentials)`),
    });
  });

  it('PII labels named like prototype members are ordinary labels', async () => {
    const result = await runPii(emptyEngine, 'text', {}, ['constructor', 'toString']);
    expect(result).toEqual({ entities: [], entities_by_label: {} });
  });

  it('entities grouped by label keep __proto__ and constructor as keys', () => {
    const grouped = byLabel([
      { text: 'a', label: '__proto__', start: 0, end: 1, score: 1 },
      { text: 'b', label: 'constructor', start: 1, end: 2, score: 1 },
    ]);
    expect(JSON.parse(JSON.stringify(grouped))).toEqual(JSON.parse('{"__proto__":["a"],"constructor":["b"]}'));
  });

  it('GLiNER schema groups named __proto__ are kept', () => {
    const schema = readSchema(JSON.parse('{"schema":{"__proto__":["name"],"toString":["age"]}}') as Record<string, unknown>);
    expect(Object.keys(schema)).toEqual(['__proto__', 'toString']);
    expect(schema.toString).toEqual(['age']);
  });
});
