/** POST /v1/chat/completions (non-streaming) over real sockets against the fake upstream: shape, validation, routing, task models. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { FAKE_FINGERPRINT } from '../../helpers/fake-upstream.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv({
    env: { FAKE_UPSTREAM_KEY: 'upstream-secret-123' },
    extra: { 'glm-5.2': { api_key_env: 'FAKE_UPSTREAM_KEY', upstream_model: 'zai-org/GLM-5.2' } },
  });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const chat = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body, headers });

const hello = (model = 'gpt-oss-120b') => ({ model, messages: [{ role: 'user', content: 'Hello' }] });

const USAGE_11_7 = {
  prompt_tokens: 11,
  completion_tokens: 7,
  total_tokens: 18,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

describe('happy path', () => {
  it('answers with the full chat.completion object', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello());
    expect(res.status).toBe(200);
    expect(res.body.id).toMatch(/^chatcmpl-[A-Za-z0-9_-]{20}$/);
    expect(Number.isInteger(res.body.created)).toBe(true);
    expect(Math.abs(res.body.created - Date.now() / 1000)).toBeLessThan(5);
    expect(res.body).toEqual({
      id: res.body.id,
      object: 'chat.completion',
      created: res.body.created,
      model: 'gpt-oss-120b',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello from the fake upstream.', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: USAGE_11_7,
      // The engine's own field, carried through.
      system_fingerprint: FAKE_FINGERPRINT,
      service_tier: 'default',
    });
  });

  it('sends the upstream model name, the request id, sampling, metadata and normalised roles upstream', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, {
      model: 'gpt-oss-120b',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Part one.' }, { type: 'text', text: 'Part two.' }] },
        { role: 'user', content: 'Hello', name: 'ann' },
      ],
      metadata: { usecase: 'ner', threshold: 0.3 },
      temperature: 0.2,
      max_tokens: 50,
      stop: ['\n\n'],
      logprobs: true,
    });
    expect(res.status).toBe(200);
    const [received] = env.upstream.requests;
    expect(received!.path).toBe('/chat/completions');
    expect(received!.headers['x-request-id']).toBe(res.headers.get('x-request-id'));
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(received!.headers.authorization).toBeUndefined();
    expect(received!.body).toEqual({
      temperature: 0.2,
      max_tokens: 50,
      stop: ['\n\n'],
      logprobs: true,
      model: 'openai/gpt-oss-120b',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Part one.\nPart two.' },
        { role: 'user', content: 'Hello', name: 'ann' },
      ],
      metadata: { usecase: 'ner', threshold: 0.3 },
    });
  });

  it('sends the configured API key upstream as a bearer token', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('glm-5.2'));
    expect(res.status).toBe(200);
    expect(env.upstream.requests[0]!.headers.authorization).toBe('Bearer upstream-secret-123');
    expect(env.upstream.requests[0]!.body.model).toBe('zai-org/GLM-5.2');
  });

  it('returns the reasoning and its token count when the upstream reports them', async () => {
    env.upstream.chat({ content: '42', reasoning: 'Six times seven.', usage: { prompt_tokens: 9, completion_tokens: 12, reasoning_tokens: 8 } });
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('qwen3-30b-a3b-fp8'));
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message).toEqual({
      role: 'assistant',
      content: '42',
      refusal: null,
      annotations: [],
      // The engine's field as sent, and Sluice's name for it.
      reasoning_content: 'Six times seven.',
      reasoning: 'Six times seven.',
    });
    expect(res.body.usage.completion_tokens_details.reasoning_tokens).toBe(8);
    expect(res.body.usage.total_tokens).toBe(21);
  });

  it('accepts model ids case-insensitively and answers with the canonical id', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('GPT-OSS-120B'));
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('gpt-oss-120b');
  });

  it('records the usage and debits its cost', async () => {
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const res = await chat(tenant.key, hello());
    // gpt-oss-120b: 11 × $0.15/M + 7 × $0.60/M = 5.85 µ$, rounded up to 6.
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 6);
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({
      projectId: tenant.projectId,
      keyId: tenant.keyId,
      model: 'gpt-oss-120b',
      route: '/v1/chat/completions',
      inputTokens: 11,
      outputTokens: 7,
      costMicros: 6,
      requestId: res.headers.get('x-request-id'),
      status: 200,
    });
  });
});

describe('validation', () => {
  const cases: Array<[string, unknown, string, string | null]> = [
    ['missing model', { messages: [{ role: 'user', content: 'x' }] }, 'model is required', 'model'],
    ['non-string model', { model: 7, messages: [{ role: 'user', content: 'x' }] }, 'model must be a non-empty string', 'model'],
    ['missing messages', { model: 'gpt-oss-120b' }, 'messages is required', 'messages'],
    ['empty messages', { model: 'gpt-oss-120b', messages: [] }, 'messages must be a non-empty array', 'messages'],
    ['a message that is a string', { model: 'gpt-oss-120b', messages: ['hi'] }, 'messages[0] must be an object with role and content, got a string', 'messages[0]'],
    ['an unknown role', { model: 'gpt-oss-120b', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role must be one of system, user, assistant, tool, developer', 'messages[0].role'],
    ['a missing role', { model: 'gpt-oss-120b', messages: [{ content: 'x' }] }, 'messages[0].role is required', 'messages[0].role'],
    ['a missing content', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'x' }, { role: 'user' }] }, 'messages[1].content is required', 'messages[1].content'],
    ['an empty content', { model: 'gpt-oss-120b', messages: [{ role: 'system', content: 'x' }, { role: 'user', content: '' }] }, 'messages[1].content must be a non-empty string', 'messages[1].content'],
    ['a part of an unknown type', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'video', video: {} }] }] }, 'messages[0].content[1].type must be one of text, image_url, input_audio, file', 'messages[0].content[1].type'],
    ['a part without text', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text must be a string', 'messages[0].content[0].text'],
    ['a temperature out of range', { ...hello(), temperature: 3 }, 'temperature must be a number between 0 and 2', 'temperature'],
    ['a fractional max_tokens', { ...hello(), max_tokens: 1.5 }, 'max_tokens must be an integer of at least 1', 'max_tokens'],
    ['n above 128', { ...hello(), n: 129 }, 'n must be an integer between 1 and 128', 'n'],
    ['tools that are not a list', { ...hello(), tools: { type: 'function', function: { name: 'f' } } }, 'tools must be an array of objects, got an object', 'tools'],
    ['a non-boolean stream', { ...hello(), stream: 'yes' }, 'stream must be a boolean, got a string', 'stream'],
    ['metadata that is not an object', { ...hello(), metadata: 'x' }, 'metadata must be an object, got a string', 'metadata'],
    ['eleven categories', { ...hello('deberta-v3-small'), categories: 'abcdefghijk'.split('') }, 'At most 10 candidate labels are allowed, got 11', 'categories'],
    ['an empty category', { ...hello('deberta-v3-small'), categories: ['a', ' '] }, 'categories[1] must be a non-empty string', 'categories[1]'],
  ];

  it.each(cases)('rejects %s with 400, the exact message and param, and calls nothing', async (_name, body, message, param) => {
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const res = await chat(tenant.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });
    expect(env.upstream.count()).toBe(0);
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before);
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });

  it('rejects a body that is not a JSON object', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, [hello()]);
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(env.upstream.count()).toBe(0);
  });

  it('requires an API key', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { body: hello() });
    expect(res.status).toBe(401);
    expect(env.upstream.count()).toBe(0);
  });
});

describe('routing', () => {
  const cases: Array<[string, string]> = [
    ['all-minilm-l6-v2', 'Model all-minilm-l6-v2 is not supported on /v1/chat/completions; it is served on /v1/embeddings'],
    ['zlm-v1-moderation-edge', 'Model zlm-v1-moderation-edge is not supported on /v1/chat/completions; it is served on /v1/moderations'],
    ['whisper-tiny', 'Model whisper-tiny is not supported on /v1/chat/completions; it is served on /v1/audio/transcriptions and /v1/audio/translations'],
    ['gpt-5', 'The model `gpt-5` does not exist or you do not have access to it.'],
  ];
  it.each(cases)('answers 400 model_not_found for %s', async (model, message) => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello(model));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'model_not_found', param: 'model' } });
    expect(env.upstream.count()).toBe(0);
  });

  it('answers 503 model_not_available, saying how to fix it, for a model without a usable backend', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('llama-3.1-8b-instruct-fast'));
    expect(res.status).toBe(200);
    const unbound = await chat(tenant.key, hello('LFM2.5-1.2B-Instruct'));
    expect(unbound.status).toBe(503);
    expect(unbound.body.error.code).toBe('model_not_available');
    expect(unbound.body.error.param).toBe('model');
    expect(unbound.body.error.message).toMatch(/^Model LFM2\.5-1\.2B-Instruct is not available: .+; run `sluice models pull LFM2\.5-1\.2B-Instruct`$/);
  });
});

describe('classification, extraction and summarization models', () => {
  it('sends labels from a bracketed system message and answers with the JSON result as content', async () => {
    env.upstream.chat({ content: '{"sports":0.91,"finance":0.06,"politics":0.03}', usage: { prompt_tokens: 8, completion_tokens: 0 } });
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, {
      model: 'deberta-v3-small',
      messages: [
        { role: 'system', content: '[Sports, finance, "politics"]' },
        { role: 'user', content: 'The match went to extra time.' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('{"sports":0.91,"finance":0.06,"politics":0.03}');
    expect(res.body.usage.prompt_tokens).toBe(8);
    expect(env.upstream.requests[0]!.body).toEqual({
      model: 'deberta-v3-small',
      messages: [{ role: 'user', content: 'The match went to extra time.' }],
      categories: ['Sports', 'finance', 'politics'],
    });
  });

  it('reads comma-separated labels, prefers `categories`, and passes metadata as options', async () => {
    env.upstream.chat({ content: '{"a":1}' });
    const tenant = await env.server.newTenant();
    await chat(tenant.key, { model: 'deberta-v3-small', messages: [{ role: 'system', content: 'tech, art' }, { role: 'user', content: 'x' }] });
    await chat(tenant.key, { model: 'deberta-v3-small', categories: ['one', 'two'], metadata: { multi_label: true }, messages: [{ role: 'system', content: 'tech, art' }, { role: 'user', content: 'x' }] });
    expect(env.upstream.requests[0]!.body.categories).toEqual(['tech', 'art']);
    expect(env.upstream.requests[1]!.body.categories).toEqual(['one', 'two']);
    expect(env.upstream.requests[1]!.body.metadata).toEqual({ multi_label: true });
  });

  it('refuses more than 10 labels in a system message, naming that message', async () => {
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, {
      model: 'deberta-v3-small',
      messages: [{ role: 'user', content: 'x' }, { role: 'system', content: '[a,b,c,d,e,f,g,h,i,j,k]' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ message: 'At most 10 candidate labels are allowed, got 11', type: 'invalid_request_error', code: 'invalid_request_error', param: 'messages[1].content' });
  });

  it('answers a summarization model with the plain summary string', async () => {
    env.upstream.chat({ content: 'artemis iii is scheduled for 2026.' });
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('t5-small'));
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('artemis iii is scheduled for 2026.');
  });

  it('answers 502 when a classifier upstream returns something that is not JSON', async () => {
    env.upstream.chat({ content: 'not json' });
    const tenant = await env.server.newTenant();
    const res = await chat(tenant.key, hello('zlm-v1-iab-classify-edge'));
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe('Upstream for model zlm-v1-iab-classify-edge answered unexpectedly: the task result is not JSON');
  });
});
