/**
 * Bedrock's failures in Sluice's meaning, each through the chat completions route:
 * throttling is a 429, an unavailable or not-ready model is retried on the other
 * deployment, a context-length ValidationException goes to the context_window_fallbacks
 * model, refused credentials and an unknown model are a 502 that says so; what Converse
 * cannot carry is a 400 naming the field and the provider (or dropped by drop_params); a
 * dead local deployment falls back to Bedrock. The AWS secret key appears in no answer
 * or log line, even when the provider echoes it back.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { answer, bedrockError, streamException, TEST_AWS } from '../../helpers/fake-bedrock.js';
import { usageOf } from '../inference/setup.js';
import { CLAUDE_ID, startBedrockEnv, type BedrockEnv } from './bedrock-setup.js';

let env: BedrockEnv;

beforeAll(async () => {
  env = await startBedrockEnv();
}, 30_000);
afterAll(async () => env?.close());
beforeEach(() => {
  env.bedrock.reset();
});

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: env.key, body: { model, messages: [{ role: 'user', content: 'Hello?' }], ...extra } });

describe('bedrock errors', () => {
  it('answers ThrottlingException as a 429 rate limit', async () => {
    env.bedrock.setDefault(bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'));
    const res = await chat('claude-bedrock').finally(() => env.bedrock.setDefault(answer([{ text: 'Hello from Bedrock.' }])));
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' });
    expect(res.body.error.message).toContain('rate limited by bedrock (ThrottlingException)');
  });

  it('retries a throttled deployment\'s call on the other deployment', async () => {
    env.bedrock.enqueue(bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'));
    const res = await chat('claude-pair');
    expect(res.status).toBe(200);
    expect(new Set(env.bedrock.requests.map((r) => r.modelId))).toEqual(new Set(['pair-east', 'pair-west']));
  });

  it.each([
    [503, 'ServiceUnavailableException', 'Bedrock is unavailable.'],
    [429, 'ModelNotReadyException', 'The model is not ready.'],
    [500, 'InternalServerException', 'Internal error.'],
  ])('retries a %i %s on the other deployment', async (status, type, message) => {
    env.bedrock.enqueue(bedrockError(status, type, message));
    const res = await chat('claude-pair');
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Hello from Bedrock.');
    const models = env.bedrock.requests.map((r) => r.modelId);
    expect(models).toHaveLength(2);
    expect(new Set(models)).toEqual(new Set(['pair-east', 'pair-west']));
  });

  it('sends a context-length ValidationException to the context_window_fallbacks model', async () => {
    env.bedrock.enqueue(bedrockError(400, 'ValidationException', 'Input is too long for requested model.'));
    const res = await chat('ctx-short');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('claude-bedrock');
    expect(res.headers.get('x-sluice-fallback')).toBe('claude-bedrock');
    expect(env.bedrock.requests.map((r) => r.modelId)).toEqual(['short', CLAUDE_ID]);
  });

  it('passes any other ValidationException through as the caller\'s 400', async () => {
    env.bedrock.enqueue(bedrockError(400, 'ValidationException', 'temperature: must be at most 1'));
    const res = await chat('claude-bedrock', { temperature: 1.5 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'temperature: must be at most 1', type: 'invalid_request_error' });
  });

  it('says that Bedrock refused the credentials (AccessDeniedException) as a 502, without the secret it echoed', async () => {
    env.bedrock.enqueue(bedrockError(403, 'AccessDeniedException', `User with secret ${TEST_AWS.secretAccessKey} is not authorized to perform bedrock:InvokeModel`));
    const res = await chat('claude-bedrock');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
    expect(res.body.error.message).toContain("refused Sluice's AWS credentials (bedrock AccessDeniedException");
    expect(res.body.error.message).toContain('[redacted]');
    expect(JSON.stringify(res.body)).not.toContain(TEST_AWS.secretAccessKey);
    expect(env.logs.join('')).not.toContain(TEST_AWS.secretAccessKey);
    const traces = env.traces();
    expect(traces).toContain('"http.response.status_code":502');
    expect(traces).not.toContain(TEST_AWS.secretAccessKey);
  });

  it('names the unknown model (ResourceNotFoundException) as a 502', async () => {
    env.bedrock.enqueue(bedrockError(404, 'ResourceNotFoundException', 'The provided model identifier is invalid.'));
    const res = await chat('claude-bedrock');
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe(
      `Upstream for model claude-bedrock: bedrock has no model ${CLAUDE_ID} in us-east-1 (check upstream_model): The provided model identifier is invalid.`,
    );
  });

  it('answers a throttled stream, before its first event, as a 429 in JSON', async () => {
    env.bedrock.setDefault(bedrockError(429, 'ThrottlingException', 'Too many requests, please wait before trying again.'));
    const res = await chat('claude-bedrock', { stream: true }).finally(() => env.bedrock.setDefault(answer([{ text: 'Hello from Bedrock.' }])));
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limit_exceeded');
  });

  it('retries a stream whose event stream fails before its first answer event on the other deployment', async () => {
    env.bedrock.enqueue(streamException('serviceUnavailableException', 'Bedrock is unavailable.', 1));
    const res = await fetch(`${env.server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': env.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-pair', stream: true, messages: [{ role: 'user', content: 'Hello?' }] }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('Bedrock.');
    expect(text).toContain('[DONE]');
    expect(env.bedrock.requests).toHaveLength(2);
  });

  it('ends a stream whose event stream raises an exception after it started, as an error event', async () => {
    env.bedrock.enqueue(streamException('modelStreamErrorException', 'The model stream failed.', 3));
    const res = await fetch(`${env.server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': env.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-bedrock', stream: true, messages: [{ role: 'user', content: 'Hello?' }] }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('Partial ');
    expect(text).toContain('The model stream failed.');
    expect(text).not.toContain('[DONE]');
  });
});

describe('what Converse cannot carry', () => {
  it.each([
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['n', { n: 2 }],
    ['frequency_penalty', { frequency_penalty: 0.5 }],
    ['logprobs', { logprobs: true }],
  ])('refuses %s with a 400 naming it and the provider', async (field, extra) => {
    const res = await chat('claude-bedrock', extra);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: field });
    expect(res.body.error.message).toMatch(new RegExp(`^${field} is not supported by provider bedrock: `));
    expect(env.bedrock.requests).toHaveLength(0);
  });

  it('refuses an image given by URL (Converse takes bytes)', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', {
      key: env.key,
      body: { model: 'claude-bedrock', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('messages[0].content[0].image_url');
    expect(res.body.error.message).toContain('not supported by provider bedrock');
  });

  it('drops the fields the model\'s drop_params lists, and sends the rest', async () => {
    const res = await chat('claude-drop', { logit_bias: { '1': 5 }, presence_penalty: 1, max_tokens: 10 });
    expect(res.status).toBe(200);
    expect(env.bedrock.requests[0]!.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hello?' }] }], inferenceConfig: { maxTokens: 10 } });
  });
});

describe('fallback from a local engine to bedrock', () => {
  it('answers in the client\'s wire when the local deployment is dead; the usage record names bedrock\'s model, deployment and price', async () => {
    env.bedrock.enqueue(answer([{ text: 'From the cloud.' }], { usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 } }));
    const res = await chat('local-llm');
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('chat.completion');
    expect(res.body.model).toBe('claude-bedrock');
    expect(res.body.choices[0].message.content).toBe('From the cloud.');
    expect(res.headers.get('x-sluice-fallback')).toBe('claude-bedrock');
    const record = (await usageOf(env.server, env.projectId)).find((r) => r.requestId === res.headers.get('x-request-id'));
    // 100 tokens in at $3/M and 20 out at $15/M: bedrock's model price, not the local one's $1/M.
    expect(record).toMatchObject({ model: 'claude-bedrock', deployment: 'bedrock-use1', inputTokens: 100, outputTokens: 20, costMicros: 600, status: 200 });
  });

  it('never logs or traces the AWS secret key', () => {
    expect(env.logs.length).toBeGreaterThan(0);
    expect(env.logs.join('')).not.toContain(TEST_AWS.secretAccessKey);
    expect(env.traces()).not.toContain(TEST_AWS.secretAccessKey);
  });
});
