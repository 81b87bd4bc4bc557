/** POST /v1/responses against the fake upstream. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { fail } from '../../helpers/fake-upstream.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv({ extra: { 'LFM2.5-1.2B-Thinking': {}, 'glm-5.2': {}, 'deepseek-v4-flash': {} } });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const respond = (key: string, body: unknown) => call(env.server.baseUrl, 'POST', '/v1/responses', { key, body });

describe('happy path', () => {
  it('answers with the full Responses object and sends instructions as a system message', async () => {
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, {
      model: 'gpt-oss-120b',
      input: 'What is 2+2?',
      instructions: 'Answer briefly.',
      max_output_tokens: 64,
      temperature: 0.3,
      metadata: { topic: 'math' },
    });
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(body.output[0].id).toMatch(/^msg_[0-9a-f]{48}$/);
    expect(Math.abs(body.created_at - Date.now() / 1000)).toBeLessThan(5);
    expect(body.completed_at).toBeGreaterThanOrEqual(body.created_at);
    expect(body).toEqual({
      id: body.id,
      object: 'response',
      created_at: body.created_at,
      status: 'completed',
      completed_at: body.completed_at,
      error: null,
      incomplete_details: null,
      instructions: 'Answer briefly.',
      max_output_tokens: 64,
      model: 'gpt-oss-120b',
      output: [
        {
          type: 'message',
          id: body.output[0].id,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello from the fake upstream.', annotations: [], logprobs: [] }],
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: 0.3,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'auto',
      usage: { input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 },
      user: null,
      metadata: { topic: 'math' },
      background: false,
      conversation: null,
      frequency_penalty: 0,
      presence_penalty: 0,
      top_logprobs: 0,
      max_tool_calls: null,
      service_tier: 'default',
      safety_identifier: null,
      prompt_cache_key: null,
    });
    expect(env.upstream.requests[0]!.body).toEqual({
      temperature: 0.3,
      max_tokens: 64,
      model: 'openai/gpt-oss-120b',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'What is 2+2?' },
      ],
      metadata: { topic: 'math' },
    });
  });

  it('puts the reasoning item first when the model reasons', async () => {
    env.upstream.chat({ content: '4', reasoning: '2 and 2 make 4.', usage: { prompt_tokens: 5, completion_tokens: 9, reasoning_tokens: 6 } });
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, { model: 'LFM2.5-1.2B-Thinking', input: '2+2?' });
    expect(res.status).toBe(200);
    expect(res.body.output).toHaveLength(2);
    expect(res.body.output[0]).toEqual({ id: res.body.output[0].id, type: 'reasoning', content: [{ type: 'reasoning_text', text: '2 and 2 make 4.' }], summary: [] });
    expect(res.body.output[0].id).toMatch(/^rs_[0-9a-f]{48}$/);
    expect(res.body.output[1].content[0].text).toBe('4');
    expect(res.body.usage.output_tokens_details).toEqual({ reasoning_tokens: 6 });
  });

  it('accepts a message list with input_text parts, and max_tokens as the output limit', async () => {
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, {
      model: 'gpt-oss-120b',
      max_tokens: 20,
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'How are you?' }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.max_output_tokens).toBe(20);
    expect(env.upstream.requests[0]!.body.max_tokens).toBe(20);
    expect(env.upstream.requests[0]!.body.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'How are you?' },
    ]);
  });

  it('reports a length-limited answer as incomplete', async () => {
    env.upstream.chat({ finishReason: 'length' });
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, { model: 'gpt-oss-120b', input: 'Tell me everything.' });
    expect(res.body.status).toBe('incomplete');
    expect(res.body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(res.body.completed_at).toBeNull();
    expect(res.body.output[0].status).toBe('incomplete');
  });

  it('reads zero-shot labels from instructions and returns the JSON result as output text', async () => {
    env.upstream.chat({ content: '{"finance":0.8,"sports":0.2}' });
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, { model: 'deberta-v3-small', input: 'Stocks fell.', instructions: '[sports, finance]' });
    expect(res.status).toBe(200);
    expect(res.body.output[0].content[0].text).toBe('{"finance":0.8,"sports":0.2}');
    expect(env.upstream.requests[0]!.body).toEqual({
      model: 'deberta-v3-small',
      messages: [{ role: 'user', content: 'Stocks fell.' }],
      categories: ['sports', 'finance'],
    });
  });

  it('records usage on /v1/responses and debits it', async () => {
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const res = await respond(tenant.key, { model: 'gpt-oss-120b', input: 'Hi' });
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ model: 'gpt-oss-120b', route: '/v1/responses', inputTokens: 11, outputTokens: 7, costMicros: 6, requestId: res.headers.get('x-request-id'), status: 200 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 6);
  });

  it('maps upstream failures like chat completions, unbilled', async () => {
    env.upstream.enqueue('/chat/completions', fail(500, 'boom'));
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, { model: 'gpt-oss-120b', input: 'Hi' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });
});

describe('routing and validation', () => {
  it.each(['qwen3-30b-a3b-fp8', 'glm-5.2', 'deepseek-v4-flash'])('refuses chat-only model %s', async (model) => {
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, { model, input: 'Hi' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: `Model ${model} is not supported on /v1/responses; it is served on /v1/chat/completions`,
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
    expect(env.upstream.count()).toBe(0);
  });

  it('refuses embedding and moderation models', async () => {
    const tenant = await env.server.newTenant();
    const embedding = await respond(tenant.key, { model: 'bge-small-en-v1.5', input: 'Hi' });
    expect(embedding.body.error.message).toBe('Model bge-small-en-v1.5 is not supported on /v1/responses; it is served on /v1/embeddings');
    const moderation = await respond(tenant.key, { model: 'zlm-v1-moderation-edge', input: 'Hi' });
    expect(moderation.body.error.message).toBe('Model zlm-v1-moderation-edge is not supported on /v1/responses; it is served on /v1/moderations');
  });

  const cases: Array<[string, unknown, string, string]> = [
    ['missing input', { model: 'gpt-oss-120b' }, 'input is required', 'input'],
    ['empty input', { model: 'gpt-oss-120b', input: '' }, 'input must be a non-empty string or a list of messages', 'input'],
    ['a numeric content', { model: 'gpt-oss-120b', input: [{ role: 'user', content: 5 }] }, 'input[0].content must be a non-empty string or an array of content parts', 'input[0].content'],
    ['an unknown item', { model: 'gpt-oss-120b', input: [{ type: 'item_reference', id: 'x' }] }, 'input[0].type must be one of message, function_call, function_call_output, reasoning', 'input[0].type'],
    ['a custom tool', { model: 'gpt-oss-120b', input: 'Hi', tools: [{ type: 'custom', name: 'grammar' }] }, 'tools[0].type "custom" is not supported; only function, namespace and hosted tools are', 'tools[0].type'],
    ['an xml output', { model: 'gpt-oss-120b', input: 'Hi', text: { format: { type: 'xml' } } }, 'text.format.type "xml" is not supported; use text, json_object or json_schema', 'text.format.type'],
    ['a numeric previous_response_id', { model: 'gpt-oss-120b', input: 'Hi', previous_response_id: 5 }, 'previous_response_id must be a string, got a number', 'previous_response_id'],
    ['a non-boolean background', { model: 'gpt-oss-120b', input: 'Hi', background: 'yes' }, 'background must be a boolean, got a string', 'background'],
    ['a bad truncation', { model: 'gpt-oss-120b', input: 'Hi', truncation: 'middle' }, 'truncation must be "auto" or "disabled"', 'truncation'],
    ['a zero max_output_tokens', { model: 'gpt-oss-120b', input: 'Hi', max_output_tokens: 0 }, 'max_output_tokens must be an integer of at least 1', 'max_output_tokens'],
    ['a non-string instructions', { model: 'gpt-oss-120b', input: 'Hi', instructions: ['x'] }, 'instructions must be a string, got an array', 'instructions'],
  ];
  it.each(cases)('rejects %s', async (_name, body, message, param) => {
    const tenant = await env.server.newTenant();
    const res = await respond(tenant.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });
    expect(env.upstream.count()).toBe(0);
  });
});
