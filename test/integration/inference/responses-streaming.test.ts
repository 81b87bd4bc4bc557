/**
 * `stream: true` on /v1/responses, read off the wire: OpenAI's event sequence (named
 * events, each with the next sequence_number) for text, reasoning and tool calls; a cut
 * after the first event ends with `error` and `response.failed` and bills what was
 * delivered; holds and usage are the chat figures for the same conversation.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { fail, stream } from '../../helpers/fake-upstream.js';
import { rawPost, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv({ extra: { 'LFM2.5-1.2B-Thinking': {} } });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

type Event = Record<string, any> & { type: string; sequence_number: number };

/** The events of a named SSE body; each block's `event:` name must be its data's `type`. */
function parse(text: string): Event[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const [nameLine, dataLine, ...rest] = block.split('\n');
      expect(rest).toEqual([]);
      const data = JSON.parse(dataLine!.slice('data: '.length)) as Event;
      expect(nameLine).toBe(`event: ${data.type}`);
      return data;
    });
}

async function streamed(key: string, body: Record<string, unknown>): Promise<Event[]> {
  const client = rawPost(env.server.baseUrl, '/v1/responses', key, { model: 'gpt-oss-120b', stream: true, ...body });
  const response = await client.response;
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  let text = '';
  for await (const chunk of client.chunks()) text += chunk.text;
  const events = parse(text);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  return events;
}

const strip = (events: Event[]) => events.map(({ sequence_number: _s, ...rest }) => rest);

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('event sequences', () => {
  it('text: created, in_progress, the message item and its part, deltas, the dones, completed', async () => {
    const tenant = await env.server.newTenant();
    const events = await streamed(tenant.key, { input: 'Hi' });
    const created = events[0]!.response;
    expect(created).toMatchObject({ object: 'response', status: 'in_progress', output: [], usage: null, completed_at: null, model: 'gpt-oss-120b' });
    expect(events[1]!.response).toEqual(created);
    const id = events[2]!.item.id;
    expect(id).toMatch(/^msg_[0-9a-f]{48}$/);
    const at = { item_id: id, output_index: 0, content_index: 0 };
    const words = ['Hello ', 'from ', 'the ', 'fake ', 'upstream.'];
    const text = 'Hello from the fake upstream.';
    const done = { type: 'output_text', text, annotations: [], logprobs: [] };
    const item = { type: 'message', id, status: 'completed', role: 'assistant', content: [done] };
    expect(strip(events.slice(2, -1))).toEqual([
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
      ...words.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
      { type: 'response.output_text.done', ...at, text, logprobs: [] },
      { type: 'response.content_part.done', ...at, part: done },
      { type: 'response.output_item.done', output_index: 0, item },
    ]);
    const last = events.at(-1)!;
    expect(last.type).toBe('response.completed');
    expect(last.response).toMatchObject({ id: created.id, status: 'completed', output: [item], error: null });
    expect(last.response.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 });
  });

  it('reasoning: a reasoning item with reasoning_text deltas, closed before the message opens', async () => {
    env.upstream.chat({ content: '4', reasoning: '2 and 2 make 4.' });
    const tenant = await env.server.newTenant();
    const events = await streamed(tenant.key, { model: 'LFM2.5-1.2B-Thinking', input: '2+2?' });
    const rs = events[2]!.item.id;
    const msg = events[8]!.item.id;
    expect(rs).toMatch(/^rs_/);
    const r = { item_id: rs, output_index: 0, content_index: 0 };
    const m = { item_id: msg, output_index: 1, content_index: 0 };
    const reasoningPart = { type: 'reasoning_text', text: '2 and 2 make 4.' };
    const textPart = { type: 'output_text', text: '4', annotations: [], logprobs: [] };
    expect(strip(events.slice(2))).toEqual([
      { type: 'response.output_item.added', output_index: 0, item: { id: rs, type: 'reasoning', content: [], summary: [] } },
      { type: 'response.content_part.added', ...r, part: { type: 'reasoning_text', text: '' } },
      { type: 'response.reasoning_text.delta', ...r, delta: '2 and 2 make 4.' },
      { type: 'response.reasoning_text.done', ...r, text: '2 and 2 make 4.' },
      { type: 'response.content_part.done', ...r, part: reasoningPart },
      { type: 'response.output_item.done', output_index: 0, item: { id: rs, type: 'reasoning', content: [reasoningPart], summary: [] } },
      { type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: msg, status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', ...m, part: { ...textPart, text: '' } },
      { type: 'response.output_text.delta', ...m, delta: '4', logprobs: [] },
      { type: 'response.output_text.done', ...m, text: '4', logprobs: [] },
      { type: 'response.content_part.done', ...m, part: textPart },
      { type: 'response.output_item.done', output_index: 1, item: { type: 'message', id: msg, status: 'completed', role: 'assistant', content: [textPart] } },
      { type: 'response.completed', response: expect.objectContaining({ status: 'completed' }) },
    ]);
    expect(events.at(-1)!.response.output.map((i: { type: string }) => i.type)).toEqual(['reasoning', 'message']);
  });

  it('reasoning then a tool call: the reasoning item is done (sealed when asked) before the call is added', async () => {
    env.upstream.chat({ reasoning: 'Look it up.', toolCalls: [{ id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const tenant = await env.server.newTenant();
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];
    const events = await streamed(tenant.key, { input: 'Weather in Oslo?', tools, store: false, include: ['reasoning.encrypted_content'] });
    expect(events.map((e) => e.type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.content_part.added', 'response.reasoning_text.delta', 'response.reasoning_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    const reasoningDone = events[7]!.item;
    expect(reasoningDone).toEqual({ id: reasoningDone.id, type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Look it up.' }], summary: [], encrypted_content: expect.stringMatching(/^sluice-rs1\./) });
    expect(events.at(-1)!.response.output[0]).toEqual(reasoningDone);
  });

  it('a reasoning engine\'s stream sends only Open Responses streaming events, with the fields each one\'s schema requires', async () => {
    // Open Responses' compliance suite validates each event against the union of its streaming event schemas
    // (src/lib/sse-parser.ts there; its generated zod names the reasoning events response.reasoning_text.*).
    const required: Record<string, string[]> = {
      'response.created': ['response'], 'response.in_progress': ['response'], 'response.completed': ['response'],
      'response.output_item.added': ['output_index', 'item'], 'response.output_item.done': ['output_index', 'item'],
      'response.content_part.added': ['item_id', 'output_index', 'content_index', 'part'], 'response.content_part.done': ['item_id', 'output_index', 'content_index', 'part'],
      'response.reasoning_text.delta': ['item_id', 'output_index', 'content_index', 'delta'], 'response.reasoning_text.done': ['item_id', 'output_index', 'content_index', 'text'],
      'response.output_text.delta': ['item_id', 'output_index', 'content_index', 'delta'], 'response.output_text.done': ['item_id', 'output_index', 'content_index', 'text'],
      'response.function_call_arguments.delta': ['item_id', 'output_index', 'delta'], 'response.function_call_arguments.done': ['item_id', 'output_index', 'arguments'],
    };
    const tenant = await env.server.newTenant();
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];
    env.upstream.chat({ content: 'One, two, three.', reasoning: 'Count.' });
    const text = await streamed(tenant.key, { input: 'Count from 1 to 3.' });
    env.upstream.chat({ reasoning: 'Look it up.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{}' }] });
    const calls = await streamed(tenant.key, { input: 'Weather?', tools });
    for (const event of [...text, ...calls]) {
      expect(Object.keys(required)).toContain(event.type);
      for (const field of ['sequence_number', ...required[event.type]!]) expect(event, `${event.type}.${field}`).toHaveProperty(field);
    }
    expect(text.filter((e) => e.type.startsWith('response.reasoning')).map((e) => e.type)).toEqual(['response.reasoning_text.delta', 'response.reasoning_text.done']);
  });

  it('tool call: a function_call item, its arguments deltas and done', async () => {
    env.upstream.chat({ toolCalls: [{ id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const tenant = await env.server.newTenant();
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const events = await streamed(tenant.key, { input: 'Weather in Oslo?', tools });
    const id = events[2]!.item.id;
    expect(id).toMatch(/^fc_/);
    const item = { type: 'function_call', id, call_id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' };
    expect(strip(events.slice(2))).toEqual([
      { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: id, output_index: 0, delta: '{"city"' },
      { type: 'response.function_call_arguments.delta', item_id: id, output_index: 0, delta: ':"Oslo"}' },
      { type: 'response.function_call_arguments.done', item_id: id, output_index: 0, name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'response.output_item.done', output_index: 0, item },
      { type: 'response.completed', response: expect.objectContaining({ status: 'completed', output: [item] }) },
    ]);
    expect(env.upstream.requests[0]!.body.tools).toEqual([{ type: 'function', function: { name: 'get_weather', parameters: tools[0]!.parameters } }]);
  });

  it('a length-limited stream ends with response.incomplete', async () => {
    env.upstream.chat({ finishReason: 'length' });
    const tenant = await env.server.newTenant();
    const events = await streamed(tenant.key, { input: 'Tell me everything.', max_output_tokens: 7 });
    const last = events.at(-1)!;
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null, max_output_tokens: 7 });
    expect(events.at(-2)!.item.status).toBe('incomplete');
  });
});

describe('failures', () => {
  it('a failure before the first event is a plain JSON error, unbilled', async () => {
    env.upstream.enqueue('/chat/completions', fail(503, 'no capacity'));
    const tenant = await env.server.newTenant();
    const res = await call(env.server.baseUrl, 'POST', '/v1/responses', { key: tenant.key, body: { model: 'gpt-oss-120b', input: 'Hi', stream: true } });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    // The stream was handed over before the engine answered: none of its headers stay on the error.
    for (const name of ['cache-control', 'x-accel-buffering', 'trailer']) expect(res.headers.get(name)).toBeNull();
    expect(res.body.error).toEqual({ message: 'Upstream error for model gpt-oss-120b (status 503): no capacity', type: 'internal_error', code: 'upstream_error', param: null });
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);
  });

  it('a cut after the first byte ends with error and response.failed, never a completion, and bills what was delivered', async () => {
    env.upstream.enqueue('/chat/completions', stream(['one ', 'two ', 'three'], { closeAfter: 2, delayMs: 20 }));
    const tenant = await env.server.newTenant();
    const events = await streamed(tenant.key, { input: 'Hello' });
    const types = events.map((e) => e.type);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'error',
      'response.failed',
    ]);
    const message = 'Upstream for model gpt-oss-120b is unreachable or closed the connection (UND_ERR_SOCKET)';
    const error = { message, type: 'server_error', param: null, code: 'upstream_error' };
    expect(strip([events[6]!])).toEqual([{ type: 'error', code: 'upstream_error', message, param: null, error }]);
    const failed = events[7]!.response;
    expect(failed).toMatchObject({ status: 'failed', error: { message, type: 'server_error', param: null, code: 'upstream_error' }, completed_at: null });
    expect(failed.output[0]).toMatchObject({ type: 'message', status: 'in_progress', content: [{ type: 'output_text', text: 'one two ' }] });
    await waitFor(async () => (await usageOf(env.server, tenant.projectId)).length === 1, 'the usage record');
    const [record] = await usageOf(env.server, tenant.projectId);
    // Estimated (no tokenizer): "Hello" → 2 tokens in; "one two " (8 bytes) → 2 tokens out.
    expect(record).toMatchObject({ route: '/v1/responses', inputTokens: 2, outputTokens: 2, status: 502 });
    expect(failed.usage).toMatchObject({ input_tokens: 2, output_tokens: 2 });
  });

  it('a client that leaves stops the engine and is billed for what was generated', async () => {
    env.upstream.enqueue('/chat/completions', stream(['alpha ', 'beta ', 'gamma ', 'delta '], { delayMs: 300 }));
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/responses', tenant.key, { model: 'gpt-oss-120b', stream: true, input: 'Hello' });
    let seen = '';
    for await (const chunk of client.chunks()) {
      seen += chunk.text;
      if (seen.includes('"alpha "')) break;
    }
    client.disconnect();
    const [aborted] = await env.upstream.waitForAborted(1);
    expect(aborted!.completed).toBe(false);
    await waitFor(async () => (await usageOf(env.server, tenant.projectId)).length === 1, 'the usage record');
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ route: '/v1/responses', inputTokens: 2, outputTokens: 2, status: 499 });
  });
});

describe('holds and usage are the chat figures', () => {
  const tools = [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
  const chatTools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: tools[0]!.parameters } }];

  it('the same conversation is held for the same credit on both routes', async () => {
    const tenant = await env.server.newTenant({ balanceUsd: 0.00001 });
    const chat = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', {
      key: tenant.key,
      body: { model: 'gpt-oss-120b', stream: true, max_tokens: 50, tools: chatTools, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Oslo?' }] },
    });
    const responses = await call(env.server.baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: 'gpt-oss-120b', stream: true, max_output_tokens: 50, tools, instructions: 'Be brief.', input: 'Weather in Oslo?' },
    });
    expect(chat.status).toBe(429);
    expect(responses.status).toBe(429);
    expect(responses.body.error.message).toBe(
      'Insufficient credit: this request may cost up to 0.000062 USD (207 input tokens at most, an output cap of 50 tokens), and the free balance ' +
        '(the balance less the credit held by calls in flight) is 0.000010 USD, which affords an output cap of at most 0 tokens. Lower the output cap, or add credit.',
    );
    expect(responses.body.error).toEqual(chat.body.error);
    expect(env.upstream.count()).toBe(0);
  });

  it('a streamed response is settled like a streamed chat completion', async () => {
    const tenant = await env.server.newTenant();
    await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: 'gpt-oss-120b', stream: true, messages: [{ role: 'user', content: 'Hi' }] } });
    await streamed(tenant.key, { input: 'Hi' });
    await waitFor(async () => (await usageOf(env.server, tenant.projectId)).length === 2, 'two usage records');
    const records = await usageOf(env.server, tenant.projectId);
    const figures = records.map((r) => ({ route: r.route, inputTokens: r.inputTokens, outputTokens: r.outputTokens, costMicros: r.costMicros, status: r.status }));
    expect(figures).toContainEqual({ route: '/v1/chat/completions', inputTokens: 11, outputTokens: 7, costMicros: 6, status: 200 });
    expect(figures).toContainEqual({ route: '/v1/responses', inputTokens: 11, outputTokens: 7, costMicros: 6, status: 200 });
  });
});
