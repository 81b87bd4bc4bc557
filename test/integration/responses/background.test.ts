/**
 * Background responses through the `openai` SDK: create answers `queued` at once, the
 * worker runs it (poll with retrieve until it ends), cancel stops it, and its events are
 * replayed with GET ?stream=true&starting_after=N. A background response is billed once.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { stall, startFakeUpstream, stream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { inferenceYaml } from '../inference/setup.js';

const MODEL = 'gpt-oss-120b';
const ANSWER = 'Hello from the fake upstream.';
let upstream: FakeUpstream;
let server: TestServer;
let client: OpenAI;
let key: string;
let projectId: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), startWorkers: true });
  ({ key, projectId } = await server.newTenant());
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => upstream.reset());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pollUntil(id: string, done: (status: string) => boolean): Promise<OpenAI.Responses.Response> {
  for (let i = 0; i < 400; i++) {
    const response = await client.responses.retrieve(id);
    if (done(response.status!)) return response;
    await sleep(25);
  }
  throw new Error(`response ${id} never reached the expected status`);
}

/** The events of a GET ?stream=true, parsed from the SSE text. */
async function replay(id: string, query = ''): Promise<Array<{ event: string; data: any }>> {
  const res = await fetch(`${server.baseUrl}/v1/responses/${id}?stream=true${query}`, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) };
    });
}

describe('background: true', () => {
  it('answers queued at once; the worker completes it; polling retrieves it; billed once', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hello', background: true });
    expect(created.status).toBe('queued');
    expect(created.background).toBe(true);
    expect(created.output).toEqual([]);
    expect(created.usage).toBeNull();
    expect(created.id).toMatch(/^resp_[0-9a-f]{48}$/);

    const done = await pollUntil(created.id, (s) => s === 'completed');
    expect(done.id).toBe(created.id);
    expect(done.output_text).toBe(ANSWER);
    expect(done.background).toBe(true);
    expect(upstream.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'Hello' }]);
    const usage = (await server.core.repositories.usage.listByProject(projectId, 100)).items.filter((u) => u.model === MODEL);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ route: '/v1/responses', inputTokens: done.usage!.input_tokens, outputTokens: done.usage!.output_tokens, status: 200 });

    // A completed background response is continued like any stored one.
    const next = await client.responses.create({ model: MODEL, input: 'Again', previous_response_id: created.id });
    expect(upstream.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: ANSWER },
      { role: 'user', content: 'Again' },
    ]);
    expect(next.previous_response_id).toBe(created.id);
    const late = await call(server.baseUrl, 'POST', `/v1/responses/${created.id}/cancel`, { key });
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ error: { message: 'Cannot cancel a response that is already completed.', type: 'invalid_request_error', code: 'invalid_request_error', param: null } });
  });

  it('replays its events with GET ?stream=true, from starting_after', async () => {
    const created = await client.responses.create({ model: MODEL, input: 'Hello', background: true });
    await pollUntil(created.id, (s) => s === 'completed');
    const events = await replay(created.id);
    const types = events.map((e) => e.event);
    // The whole streamed sequence, stored as the engine's chunks came, numbered from 0.
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    const final = events.at(-1)!.data.response;
    expect(final.output[0].content[0].text).toBe(ANSWER);
    expect(final.background).toBe(true);
    expect((await replay(created.id, '&starting_after=1')).map((e) => e.data.sequence_number)).toEqual(events.slice(2).map((e) => e.data.sequence_number));
    // Through the SDK: retrieve with stream: true is a stream of the same events.
    const sdk = await client.responses.retrieve(created.id, { stream: true, starting_after: 0 });
    const seen: string[] = [];
    for await (const event of sdk) seen.push(event.type);
    expect(seen).toEqual(types.slice(1));
  });

  it('follows the events of a response still running until it ends', async () => {
    upstream.enqueue('/chat/completions', stream(['late', ' answer'], { delayMs: 150 }));
    const created = await client.responses.create({ model: MODEL, input: 'Hello', background: true });
    const events = await replay(created.id);
    expect(events.slice(0, 2).map((e) => e.event)).toEqual(['response.created', 'response.in_progress']);
    expect(events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta)).toEqual(['late', ' answer']);
    expect(events.at(-1)!.event).toBe('response.completed');
    expect(events.at(-1)!.data.response.output[0].content[0].text).toBe('late answer');
  });

  it('cancel stops a running response: cancelled, the engine call aborted, cancelling again answers the same', async () => {
    upstream.setDefault('/chat/completions', stall());
    const created = await client.responses.create({ model: MODEL, input: 'Hello', background: true });
    await upstream.waitForRequests(1, '/chat/completions');
    await pollUntil(created.id, (s) => s === 'in_progress');
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled.id).toBe(created.id);
    expect(cancelled.status).toBe('cancelled');
    await upstream.waitForAborted(1);
    expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
    await sleep(100);
    expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
    // Its stream ends once its run has stopped: the engine never answered, so no event was stored.
    expect(await replay(created.id)).toEqual([]);
  });

  it('refuses background without store, and with a model it does not know', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'Hi', background: true, store: false } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'background can only be used when `store` is true', type: 'invalid_request_error', code: 'invalid_request_error', param: 'background' } });
    const unknown = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: 'no-such-model', input: 'Hi', background: true } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('cancel of a queued response that no worker took yet', async () => {
    await server.features.responses.services.runner.stop();
    // The runner stays stopped: this is the file's last test.
    const created = await client.responses.create({ model: MODEL, input: 'Hello', background: true });
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled.status).toBe('cancelled');
    expect(await replay(created.id)).toEqual([]);
    expect(upstream.count('/chat/completions')).toBe(0);
  });
});
