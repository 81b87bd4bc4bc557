/**
 * Errors that say what happened: a model without files (503, no server paths, not to be
 * retried), an upstream answering something that is not JSON, and an upstream 404 on
 * the path itself (a base_url without /v1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../helpers/fake-upstream.js';
import { call } from '../../helpers/harness.js';
import { startInferenceEnv, type InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let key: string;

beforeAll(async () => {
  env = await startInferenceEnv();
  ({ key } = await env.server.newTenant());
});
afterAll(() => env.close());

const post = (path: string, body: unknown) => call(env.server.baseUrl, 'POST', path, { key, body });
const hello = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });

describe('503 model_not_available', () => {
  it('a GGUF model without its file: no absolute path, x-should-retry: false', async () => {
    const res = await post('/v1/chat/completions', hello('LFM2.5-1.2B-Instruct'));
    expect(res.status).toBe(503);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.body).toEqual({
      error: {
        message: 'Model LFM2.5-1.2B-Instruct is not available: no .gguf file in its model directory; run `sluice models pull LFM2.5-1.2B-Instruct`',
        type: 'invalid_request_error',
        code: 'model_not_available',
        param: 'model',
      },
    });
  });

  it('an ONNX model without its files names them relative to its directory', async () => {
    const form = new FormData();
    form.set('model', 'whisper-tiny');
    form.set('file', new Blob([Buffer.alloc(64)], { type: 'audio/wav' }), 'a.wav');
    const audio = await fetch(`${env.server.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const body = (await audio.json()) as { error: { message: string; code: string } };
    expect(audio.status).toBe(503);
    expect(audio.headers.get('x-should-retry')).toBe('false');
    expect(body.error.code).toBe('model_not_available');
    expect(body.error.message).toMatch(/^Model whisper-tiny is not available: missing from its model directory: [^/]*config\.json/);
    expect(body.error.message).not.toContain(env.server.core.config.modelsDir);
    expect(body.error.message).not.toContain(env.server.dataDir);
  });
});

describe('upstream answers', () => {
  it('a 200 that is not JSON is reported as such', async () => {
    env.upstream.enqueue(
      '/chat/completions',
      handler((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>proxy login</html>');
      }),
    );
    const res = await post('/v1/chat/completions', hello('gpt-oss-120b'));
    expect(res.status).toBe(502);
    expect(res.body.error).toEqual({
      message: 'Upstream for model gpt-oss-120b answered unexpectedly: it answered status 200 with a body that is not JSON (content-type text/html)',
      type: 'internal_error',
      code: 'upstream_error',
      param: null,
    });
  });

  it.each([
    ['plain text', 'text/plain', 'Not Found'],
    ['a framework JSON', 'application/json', '{"detail":"Not Found"}'],
    ['an HTML page', 'text/html', '<html><body>404</body></html>'],
  ])('a 404 as %s hints at a base_url without /v1', async (_name, type, text) => {
    env.upstream.enqueue(
      '/chat/completions',
      handler((_req, res) => {
        res.writeHead(404, { 'content-type': type });
        res.end(text);
      }),
    );
    const res = await post('/v1/chat/completions', hello('gpt-oss-120b'));
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
    expect(res.body.error.message).toMatch(
      /^Upstream for model gpt-oss-120b has no such path \(status 404 .+\); check that models\.gpt-oss-120b\.base_url ends in \/v1$/,
    );
  });

  it("an API's own 404 (an unknown upstream model) is still passed through", async () => {
    env.upstream.enqueue(
      '/chat/completions',
      handler((_req, res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"The model `x` does not exist","code":"model_not_found","param":"model"}}');
      }),
    );
    const res = await post('/v1/chat/completions', hello('gpt-oss-120b'));
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ message: 'The model `x` does not exist', type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
  });
});
