/** The official `openai` SDK, pointed at Sluice with only baseURL and an API key. */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { fakeEmbedding } from '../../helpers/fake-upstream.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let client: OpenAI;
let projectId: string;

beforeAll(async () => {
  env = await startInferenceEnv();
  const tenant = await env.server.newTenant();
  projectId = tenant.projectId;
  client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: tenant.key, maxRetries: 0 });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

describe('openai SDK', () => {
  it('chat.completions.create', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    // The SDK sends `Authorization: Bearer`; Sluice took it as the API key.
    expect(env.upstream.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('chat.completions.create with stream: true', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-oss-120b',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from the fake upstream.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  });

  it('embeddings.create (the SDK asks for base64 and decodes it)', async () => {
    const result = await client.embeddings.create({ model: 'all-minilm-l6-v2', input: ['hello world', 'bye'] });
    expect(env.upstream.requests[0]!.body.encoding_format).toBe('float');
    expect(result.model).toBe('all-MiniLM-L6-v2');
    expect(result.data.map((d) => d.index)).toEqual([0, 1]);
    expect(result.data[0]!.embedding).toEqual(fakeEmbedding('hello world', 4).map(Math.fround));
    expect(result.data[1]!.embedding).toEqual(fakeEmbedding('bye', 4).map(Math.fround));
    expect(result.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it('moderations.create', async () => {
    const result = await client.moderations.create({ model: 'omni-moderation-latest', input: 'kill the lights' });
    expect(result.model).toBe('zlm-v1-moderation-edge');
    expect(result.results[0]!.flagged).toBe(true);
    expect(result.results[0]!.categories.violence).toBe(true);
    expect(result.results[0]!.category_scores.violence).toBe(0.9);
    expect(result.results[0]!.category_applied_input_types.violence).toEqual(['text']);
  });

  it('responses.create', async () => {
    const response = await client.responses.create({ model: 'gpt-oss-120b', input: 'Hello', instructions: 'Be brief.' });
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Hello from the fake upstream.');
    expect(response.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
  });

  it('models.list and models.retrieve', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toContain('gpt-oss-120b');
    expect(ids).toContain('all-minilm-l6-v2');
    expect((await client.models.retrieve('t5-small')).owned_by).toBe('sluice');
  });

  it('raises typed errors carrying code and param', async () => {
    const error = await client.chat.completions.create({ model: 'all-minilm-l6-v2', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toBe('model_not_found');
    expect(apiError.param).toBe('model');
    expect(apiError.requestID).toMatch(/^req_/);
  });

  it('billed every successful SDK call', async () => {
    const records = await usageOf(env.server, projectId);
    expect(records.map((r) => r.route).sort()).toEqual([
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v1/embeddings',
      '/v1/moderations',
      '/v1/responses',
    ]);
  });
});

describe('GET /v1/models', () => {
  it('lists every catalog model in the OpenAI shape', async () => {
    const tenant = await env.server.newTenant();
    const res = await call(env.server.baseUrl, 'GET', '/v1/models', { key: tenant.key });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.data).toHaveLength(env.server.core.registry.list().length);
    expect(res.body.data[0]).toEqual({ id: 'gpt-oss-120b', object: 'model', created: 1767225600, owned_by: 'sluice' });
  });

  it('answers 404 model_not_found for an unknown id', async () => {
    const tenant = await env.server.newTenant();
    const res = await call(env.server.baseUrl, 'GET', '/v1/models/gpt-7', { key: tenant.key });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ message: 'The model `gpt-7` does not exist', type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
  });
});
