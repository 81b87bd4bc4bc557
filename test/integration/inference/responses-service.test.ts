/**
 * The Responses service's contract with stored responses and background runs:
 * `events()` with a given `responseId`, `priorItems` placed between `instructions` and
 * the input, and `onSettled` called once with the final resource whatever the outcome.
 * Driven through the service itself, on a server's real meter and registry.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fail } from '../../helpers/fake-upstream.js';
import { apiKeyPrincipal, type Caller } from '../../../src/domain/identity/caller.js';
import type { ResponseInputItem, ResponseStreamEvent } from '../../../src/domain/responses/responses.types.js';
import { ResponsesBody } from '../../../src/wire/responses/body.js';
import { parseBody } from '../../../src/wire/validate.js';
import { responsesRequestOf } from '../../../src/wire/responses/mapper.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let caller: Caller;
let projectId: string;

beforeAll(async () => {
  env = await startInferenceEnv();
  projectId = (await env.server.newTenant()).projectId;
  caller = { principal: apiKeyPrincipal(projectId, null), meter: env.server.core.creditMeter };
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const PRIOR: ResponseInputItem[] = [
  { role: 'user', content: 'Weather in Oslo?' },
  { type: 'reasoning', id: 'rs_1', summary: [] },
  { type: 'function_call', call_id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' },
  { type: 'function_call_output', call_id: 'call_oslo', output: '{"degrees":21}' },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 21 degrees.' }] },
];

function run(body: Record<string, unknown>, extra: { priorItems?: ResponseInputItem[]; signal?: AbortSignal } = {}) {
  const settled: Record<string, unknown>[] = [];
  const events = env.server.core.inference.responses.events(caller, responsesRequestOf(parseBody(ResponsesBody, { model: 'gpt-oss-120b', ...body })), {
    requestId: 'req_contract',
    signal: extra.signal ?? new AbortController().signal,
    responseId: 'resp_given',
    priorItems: extra.priorItems,
    onSettled: async (resource) => void settled.push(resource),
  });
  return { events, settled };
}

describe('ResponsesService.events', () => {
  it('uses the given id, puts earlier items after instructions and before the input, and settles once with the final resource', async () => {
    for (const stream of [false, true]) {
      env.upstream.reset();
      const { events, settled } = run({ instructions: 'Be brief.', input: 'And in Rome?', stream }, { priorItems: PRIOR });
      const all: ResponseStreamEvent[] = [];
      for await (const event of events) all.push(event);
      expect(all[0]!.type).toBe('response.created');
      const last = all.at(-1)!;
      expect(last.type).toBe('response.completed');
      expect((last.response as { id: string }).id).toBe('resp_given');
      expect(all.filter((e) => e.response !== undefined).every((e) => (e.response as { id: string }).id === 'resp_given')).toBe(true);
      expect(settled).toEqual([last.response]);
      expect(env.upstream.requests[0]!.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_oslo', content: '{"degrees":21}' },
        { role: 'assistant', content: 'It is 21 degrees.' },
        { role: 'user', content: 'And in Rome?' },
      ]);
    }
  });

  it('a refusal before the first event is thrown, and settled as a failed resource', async () => {
    env.upstream.enqueue('/chat/completions', fail(503, 'no capacity'));
    const { events, settled } = run({ input: 'Hi', stream: true });
    await expect(events.next()).rejects.toMatchObject({ kind: 'upstream', code: 'upstream_error' });
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({
      id: 'resp_given',
      status: 'failed',
      output: [],
      usage: null,
      error: { message: 'Upstream error for model gpt-oss-120b (status 503): no capacity', type: 'server_error', param: null, code: 'upstream_error' },
    });
  });

  it('a run whose client left is settled as cancelled, with what it produced', async () => {
    const controller = new AbortController();
    const { events, settled } = run({ input: 'Hi', stream: true }, { signal: controller.signal });
    for await (const event of events) {
      if (event.type === 'response.output_text.delta') {
        controller.abort();
        break;
      }
    }
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ id: 'resp_given', status: 'cancelled', output: [{ type: 'message', status: 'in_progress', content: [{ type: 'output_text', text: 'Hello ' }] }] });
    const records = await usageOf(env.server, projectId);
    expect(records[0]).toMatchObject({ route: '/v1/responses', status: 499 });
  });
});
