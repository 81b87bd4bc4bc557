/**
 * What coding agents send to /v1/responses, through the official `openai` SDK: namespace
 * tools (flat `<namespace>__<name>` for the engine, the namespace's function_call back,
 * streamed too), hosted tools (dropped and named in `x-sluice-dropped-tools`, or refused
 * with `responses.hosted_tools: refuse`), and reasoning carried across turns without
 * storage (`store: false`, `include: ["reasoning.encrypted_content"]`), tampered or
 * foreign sealed content refused.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AesReasoningSeal } from '../../../src/adapters/crypto/reasoning-seal.js';
import { startInferenceEnv, type InferenceEnv } from './setup.js';

const MODEL = 'gpt-oss-120b';
const LOOKUP = { type: 'function' as const, name: 'lookup', description: 'Find a customer', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, strict: false };
const CRM: OpenAI.Responses.NamespaceTool = { type: 'namespace', name: 'crm', description: 'Customer records', tools: [LOOKUP] };
const WEATHER: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false };

let env: InferenceEnv;
let refusing: InferenceEnv;
let client: OpenAI;
let refusingClient: OpenAI;

beforeAll(async () => {
  [env, refusing] = await Promise.all([startInferenceEnv(), startInferenceEnv({ yamlTail: 'responses:\n  hosted_tools: refuse\n' })]);
  client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: (await env.server.newTenant()).key, maxRetries: 0 });
  refusingClient = new OpenAI({ baseURL: `${refusing.server.baseUrl}/v1`, apiKey: (await refusing.server.newTenant()).key, maxRetries: 0 });
});
afterAll(async () => Promise.all([env.close(), refusing.close()]));
beforeEach(() => env.upstream.reset());

const lastBody = () => env.upstream.requests.at(-1)!.body;

describe('namespace tools', () => {
  it('reach the engine as flat functions; the engine\'s call comes back as the namespace\'s function_call, and goes back qualified', async () => {
    env.upstream.chat({ toolCalls: [{ id: 'call_1', name: 'crm__lookup', arguments: '{"q":"Ada"}' }] });
    const first = await client.responses.create({ model: MODEL, input: 'Find Ada', tools: [WEATHER, CRM] });
    expect(lastBody().tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: WEATHER.parameters, strict: false } },
      { type: 'function', function: { name: 'crm__lookup', description: 'Find a customer', parameters: LOOKUP.parameters, strict: false } },
    ]);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toEqual({ type: 'function_call', id: call.id, call_id: 'call_1', name: 'lookup', namespace: 'crm', arguments: '{"q":"Ada"}', status: 'completed' });
    expect(first.tools[1]).toEqual({ type: 'namespace', name: 'crm', description: 'Customer records', tools: [{ ...LOOKUP }] });

    env.upstream.chat({ toolCalls: undefined, content: 'Ada is a customer.' });
    await client.responses.create({ model: MODEL, tools: [CRM], input: [{ role: 'user', content: 'Find Ada' }, call, { type: 'function_call_output', call_id: 'call_1', output: 'found' }] });
    expect(lastBody().messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'crm__lookup', arguments: '{"q":"Ada"}' } }] });
  });

  it('streamed: the added and done items and the arguments\' done event name the function and its namespace', async () => {
    env.upstream.chat({ toolCalls: [{ id: 'call_2', name: 'crm__lookup', arguments: '{"q":"Bo"}' }] });
    const stream = client.responses.stream({ model: MODEL, input: 'Find Bo', tools: [CRM] });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = events.find((e) => e.type === 'response.output_item.added') as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(added.item).toMatchObject({ type: 'function_call', name: 'lookup', namespace: 'crm', call_id: 'call_2' });
    const done = events.find((e) => e.type === 'response.function_call_arguments.done') as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent;
    expect(done).toMatchObject({ name: 'lookup', arguments: '{"q":"Bo"}' });
    expect((await stream.finalResponse()).output[0]).toMatchObject({ name: 'lookup', namespace: 'crm' });
  });

  it('a namespaced function whose flat name another tool has is refused by name', async () => {
    const clash = { ...WEATHER, name: 'crm__lookup' };
    const err = await client.responses.create({ model: MODEL, input: 'x', tools: [clash, CRM] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, error: { message: 'tools[1].tools[0].name names the function "crm__lookup" that tools[0].name names too', param: 'tools[1].tools[0].name' } });
    expect(env.upstream.count()).toBe(0);
  });
});

describe('hosted tools', () => {
  const hosted = [{ type: 'web_search', external_web_access: true }, { type: 'web_search_preview_2025_03_11' }, { type: 'mcp', server_label: 'x', server_url: 'https://example.invalid' }] as unknown as OpenAI.Responses.Tool[];

  it('are dropped by default: named in x-sluice-dropped-tools, never seen by the engine, left out of the echo', async () => {
    const { data, response } = await client.responses.create({ model: MODEL, input: 'Hi', tools: [...hosted, WEATHER] }).withResponse();
    expect(response.headers.get('x-sluice-dropped-tools')).toBe('web_search, web_search_preview_2025_03_11, mcp');
    expect(lastBody().tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(['get_weather']);
    expect(data.tools.map((tool) => tool.type)).toEqual(['function']);
  });

  it('a request of hosted tools only reaches the engine with no tools; a stream names them too', async () => {
    const { response } = await client.responses.create({ model: MODEL, input: 'Hi', tools: hosted, stream: true }).withResponse();
    expect(response.headers.get('x-sluice-dropped-tools')).toBe('web_search, web_search_preview_2025_03_11, mcp');
    await response.text();
    expect(lastBody()).not.toHaveProperty('tools');
    expect(lastBody()).not.toHaveProperty('parallel_tool_calls');
  });

  it('are refused with responses.hosted_tools: refuse, naming the first', async () => {
    const err = await refusingClient.responses.create({ model: MODEL, input: 'Hi', tools: [WEATHER, ...hosted] }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      status: 400,
      error: { message: 'tools[1].type "web_search" is a hosted tool, which this server does not run (responses.hosted_tools is refuse)', type: 'invalid_request_error', param: 'tools[1].type' },
    });
    expect(refusing.upstream.count()).toBe(0);
  });
});

describe('reasoning carried without storage', () => {
  const sealedTurn = async () => {
    env.upstream.chat({ reasoning: 'Ada is in the CRM.', toolCalls: [{ id: 'call_3', name: 'crm__lookup', arguments: '{"q":"Ada"}' }] });
    return client.responses.create({ model: MODEL, input: 'Find Ada', tools: [CRM], store: false, include: ['reasoning.encrypted_content'], prompt_cache_key: 'session-1', client_metadata: { session_id: 's' } } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  };

  it('the reasoning item leaves sealed, comes back without its text, and reaches the engine as reasoning_content', async () => {
    const first = await sealedTurn();
    expect(lastBody()).toMatchObject({ prompt_cache_key: 'session-1' });
    expect(lastBody()).not.toHaveProperty('client_metadata');
    const [reasoning, call] = first.output as [OpenAI.Responses.ResponseReasoningItem, OpenAI.Responses.ResponseFunctionToolCall];
    expect(reasoning.encrypted_content).toMatch(/^sluice-rs1\.[A-Za-z0-9_-]+$/);
    expect(reasoning.encrypted_content).not.toContain('Ada');

    env.upstream.chat({ reasoning: null, toolCalls: undefined, content: 'Found her.' });
    const carried = { type: 'reasoning' as const, id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content };
    const second = await client.responses.create({
      model: MODEL, store: false, include: ['reasoning.encrypted_content'], tools: [CRM],
      input: [{ role: 'user', content: 'Find Ada' }, carried, call, { type: 'function_call_output', call_id: 'call_3', output: 'found' }],
    });
    expect(second.output_text).toBe('Found her.');
    expect(lastBody().messages[1]).toEqual({
      role: 'assistant', content: null, reasoning_content: 'Ada is in the CRM.',
      tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'crm__lookup', arguments: '{"q":"Ada"}' } }],
    });
  });

  it('without the include, reasoning items carry no encrypted_content', async () => {
    env.upstream.chat({ reasoning: 'Thinking.', content: 'Hi.' });
    const response = await client.responses.create({ model: MODEL, input: 'Hi', store: false });
    expect(response.output[0]).toEqual({ id: response.output[0]!.id, type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Thinking.' }], summary: [] });
  });

  const refusedWith = async (encrypted: string) => {
    env.upstream.reset();
    const input = [{ role: 'user' as const, content: 'Find Ada' }, { type: 'reasoning' as const, id: 'rs_1', summary: [], encrypted_content: encrypted }, { role: 'user' as const, content: 'Again' }];
    const err = await client.responses.create({ model: MODEL, store: false, input }).catch((e: unknown) => e);
    expect(env.upstream.count()).toBe(0);
    return err;
  };
  const REFUSAL = { status: 400, error: { message: 'input[1].encrypted_content was not sealed by this server or was altered; send reasoning items back as they were returned', type: 'invalid_request_error', param: 'input[1].encrypted_content' } };

  it('altered sealed content is refused with a 400 naming it', async () => {
    const sealed = ((await sealedTurn()).output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content!;
    const flipped = sealed.slice(0, -3) + (sealed.at(-3) === 'A' ? 'B' : 'A') + sealed.slice(-2);
    expect(await refusedWith(flipped)).toMatchObject(REFUSAL);
    expect(await refusedWith('not-sealed-at-all')).toMatchObject(REFUSAL);
  });

  it('content sealed by another server\'s key is refused the same way', async () => {
    const foreign = new AesReasoningSeal(['another server entirely, its own key']).seal('injected thoughts');
    expect(await refusedWith(foreign)).toMatchObject(REFUSAL);
  });
});
