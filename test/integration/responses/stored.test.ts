/**
 * Stored responses through the official `openai` SDK: `store` (the default) keeps a
 * response, `previous_response_id` continues it (the engine receives the earlier turn),
 * retrieve, input_items (paginated like OpenAI) and delete; `store: false` keeps nothing;
 * another project's id is 404 on every route; the janitor sweeps expired responses.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { inferenceYaml } from '../inference/setup.js';
import { DAY_MS, janitorOf, TestClock } from '../batches/support/test-clock.js';

const MODEL = 'gpt-oss-120b';
const ANSWER = 'Hello from the fake upstream.';
const clock = new TestClock();
let upstream: FakeUpstream;
let server: TestServer;
let client: OpenAI;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), overrides: { clock } });
  ({ key } = await server.newTenant());
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => upstream.reset());

const notFound = (id: string) => ({ error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', code: null, param: null } });
const previousNotFound = (id: string) => ({
  error: { message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' },
});

describe('previous_response_id', () => {
  it('continues a stored response: the engine receives the earlier turn before the new input', async () => {
    const first = await client.responses.create({ model: MODEL, input: 'My name is Ada.', instructions: 'Be brief.' });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    const second = await client.responses.create({ model: MODEL, input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe(ANSWER);
    // The first turn's instructions are not carried over (as on OpenAI); its input and answer are.
    expect(upstream.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: ANSWER },
      { role: 'user', content: 'What is my name?' },
    ]);
    // A third turn carries both earlier ones (flattened when each was stored).
    await client.responses.create({ model: MODEL, input: 'And now?', previous_response_id: second.id });
    expect(upstream.requests[2]!.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'My name is Ada.',
      ANSWER,
      'What is my name?',
      ANSWER,
      'And now?',
    ]);
  });

  it('continues a function call: the call and its output reach the engine as a tool round trip', async () => {
    upstream.chat({ toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }] });
    const tools = [{ type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: MODEL, input: 'Weather in Oslo?', tools });
    const call = first.output.find((item) => item.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' });
    upstream.reset();
    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'Sunny' }],
      tools,
    });
    expect(second.output_text).toBe(ANSWER);
    const messages = upstream.requests[0]!.body.messages;
    expect(messages[0]).toEqual({ role: 'user', content: 'Weather in Oslo?' });
    expect(messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] });
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'Sunny' });
  });

  it('retrieves a stored response as it was answered', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi', metadata: { topic: 'greeting' } });
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
  });

  it('a streamed response is stored too, as its last event had it', async () => {
    const stream = client.responses.stream({ model: MODEL, input: 'Hi' });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(ANSWER);
    // The SDK adds `parsed` fields to what it assembled; the rest is the stored object.
    const retrieved = await client.responses.retrieve(final.id);
    expect(retrieved).toMatchObject({ id: final.id, status: 'completed', output_text: ANSWER, usage: final.usage });
    expect(retrieved.output.map((item) => item.id)).toEqual(final.output.map((item) => item.id));
  });

  it('a request refused before the engine answered is not stored', async () => {
    const rows = async () => Number((await server.core.database.db.selectFrom('responses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const before = await rows();
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: 'all-minilm-l6-v2', input: 'Hi' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('model_not_found');
    expect(await rows()).toBe(before);
  });

  it('store: false keeps nothing: not retrievable, not continuable', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi', store: false });
    expect((created as unknown as { store: boolean }).store).toBe(false);
    expect((await call(server.baseUrl, 'GET', `/v1/responses/${created.id}`, { key })).body).toEqual(notFound(created.id));
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Hi', previous_response_id: created.id } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(previousNotFound(created.id));
    expect(upstream.count('/chat/completions')).toBe(1);
  });

  it('an unknown previous_response_id is 404 in the envelope, before the engine is called', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Hi', previous_response_id: 'resp_nope' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(previousNotFound('resp_nope'));
    expect(upstream.count()).toBe(0);
  });
});

describe('delete', () => {
  it('deletes a response: then it is not found, and cannot be continued', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi' });
    const deleted = await call(server.baseUrl, 'DELETE', `/v1/responses/${created.id}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.id, object: 'response.deleted', deleted: true });
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404, message: expect.stringContaining(`Response with id '${created.id}' not found.`) });
    const again = await call(server.baseUrl, 'DELETE', `/v1/responses/${created.id}`, { key });
    expect(again.status).toBe(404);
    expect(again.body).toEqual(notFound(created.id));
  });
});

describe('input_items', () => {
  const input = ['one', 'two', 'three', 'four', 'five'].map((text) => ({ role: 'user' as const, content: text }));

  it('lists this turn\'s input, newest first by default, with ids and input_text parts', async () => {
    const created = await client.responses.create({ model: MODEL, input });
    const page = await client.responses.inputItems.list(created.id);
    expect(page.data.map((item: any) => item.content[0].text)).toEqual(['five', 'four', 'three', 'two', 'one']);
    const first = page.data[0] as any;
    expect(first).toEqual({ id: expect.stringMatching(/^msg_[0-9a-f]{48}$/), type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'five' }] });
    expect(page.has_more).toBe(false);
  });

  it('pages with after, limit and order, as OpenAI does', async () => {
    const created = await client.responses.create({ model: MODEL, input });
    const path = `/v1/responses/${created.id}/input_items`;
    const first = (await call(server.baseUrl, 'GET', `${path}?order=asc&limit=2`, { key })).body;
    expect(first.object).toBe('list');
    expect(first.data.map((i: any) => i.content[0].text)).toEqual(['one', 'two']);
    expect(first.first_id).toBe(first.data[0].id);
    expect(first.last_id).toBe(first.data[1].id);
    expect(first.has_more).toBe(true);
    const second = (await call(server.baseUrl, 'GET', `${path}?order=asc&limit=2&after=${first.last_id}`, { key })).body;
    expect(second.data.map((i: any) => i.content[0].text)).toEqual(['three', 'four']);
    expect(second.has_more).toBe(true);
    const last = (await call(server.baseUrl, 'GET', `${path}?order=asc&limit=2&after=${second.last_id}`, { key })).body;
    expect(last.data.map((i: any) => i.content[0].text)).toEqual(['five']);
    expect(last.has_more).toBe(false);
    // The SDK's auto-pagination walks the same pages.
    const texts: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' })) texts.push((item as any).content[0].text);
    expect(texts).toEqual(['one', 'two', 'three', 'four', 'five']);
  });

  it('refuses a bad limit or order', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi' });
    for (const limit of ['0', '101', 'x']) {
      const res = await call(server.baseUrl, 'GET', `/v1/responses/${created.id}/input_items?limit=${limit}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { message: 'limit must be an integer between 1 and 100', type: 'invalid_request_error', code: 'invalid_limit', param: 'limit' } });
    }
    const res = await call(server.baseUrl, 'GET', `/v1/responses/${created.id}/input_items?order=up`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'order must be one of asc, desc', param: 'order' });
  });
});

describe('another project', () => {
  it('gets 404 for a response id on every route', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi' });
    const other = await server.newTenant();
    const id = created.id;
    for (const [method, path] of [
      ['GET', `/v1/responses/${id}`],
      ['GET', `/v1/responses/${id}?stream=true`],
      ['DELETE', `/v1/responses/${id}`],
      ['GET', `/v1/responses/${id}/input_items`],
      ['POST', `/v1/responses/${id}/cancel`],
    ] as const) {
      const res = await call(server.baseUrl, method, path, { key: other.key });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual(notFound(id));
    }
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key: other.key, body: { model: MODEL, input: 'Hi', previous_response_id: id } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(previousNotFound(id));
    // Still there for its own project.
    expect((await client.responses.retrieve(id)).id).toBe(id);
  });
});

describe('cancel', () => {
  it('refuses to cancel a response that was not created in the background', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi' });
    const res = await call(server.baseUrl, 'POST', `/v1/responses/${created.id}/cancel`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'Cannot cancel a synchronous response.', type: 'invalid_request_error', code: 'invalid_request_error', param: null } });
  });
});

describe('retention', () => {
  it('an expired response is not found, and the janitor sweeps it', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hi' });
    const kept = await client.responses.create({ model: MODEL, input: 'Hi' });
    const rows = () => server.core.database.db.selectFrom('responses').select('id').where('id', 'in', [created.id, kept.id]).execute();
    expect(await rows()).toHaveLength(2);
    clock.advance(30 * DAY_MS + 1000);
    try {
      expect((await call(server.baseUrl, 'GET', `/v1/responses/${created.id}`, { key })).status).toBe(404);
      const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Hi', previous_response_id: created.id } });
      expect(res.body).toEqual(previousNotFound(created.id));
      const report = await janitorOf(server.assembly).runOnce();
      expect(report.swept.responses).toBeGreaterThanOrEqual(2);
      expect(await rows()).toEqual([]);
    } finally {
      clock.advance(-(30 * DAY_MS + 1000));
    }
  });
});
