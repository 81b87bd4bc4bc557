/**
 * In-process GGUF chat with node-llama-cpp's JSON-schema grammars, on a generated tiny
 * llama model whose weights are random: it cannot choose sensible output, so what is
 * tested is that the grammar constrains it. A `json_schema` answer parses and validates
 * against the schema; with `tool_choice` `required` or a named function the answer is a
 * `tool_calls` entry whose arguments validate against the tool's parameters (`auto` is
 * gguf-tools.test.ts's). Fields the runtime cannot honour are refused with a 400 naming
 * the field and the model.
 */
import { rmSync } from 'node:fs';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';

let server: TestServer;
let modelsDir: string;
let key: string;

const MODEL = 'LFM2.5-1.2B-Instruct';
const ajv = new Ajv({ strict: false });

beforeAll(async () => {
  if (!GGUF_RUNTIMES_DIR) return;
  modelsDir = buildTestModels([MODEL]);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir, ...GGUF_RUNTIME_ENV } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
}, 120_000);

const chat = (extra: Record<string, unknown>, messages: unknown[] = [{ role: 'user', content: 'hello the world' }]) =>
  call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: MODEL, messages, temperature: 0, max_tokens: 64, ...extra } });

// Closed value sets: a random model fills an open string until its token cap. Small, too:
// most JSON characters are byte tokens of the fixture's vocabulary, one token each.
const WEATHER = { type: 'object', properties: { sunny: { type: 'boolean' } }, required: ['sunny'], additionalProperties: false };
const TIME = { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'], additionalProperties: false };
/** Grammar-constrained generation on a busy CI machine: seconds per answer. */
const SLOW = 180_000;
const TOOLS = [
  { type: 'function', function: { name: 'weather', description: 'Weather in a city', parameters: WEATHER } },
  { type: 'function', function: { name: 'time', description: 'The time in a zone', parameters: TIME } },
];
const PARAMETERS = new Map<string, object>([
  ['weather', WEATHER],
  ['time', TIME],
]);

function expectValidCall(toolCall: any, names: string[]) {
  expect(toolCall).toMatchObject({ id: expect.stringMatching(/^call_/), type: 'function' });
  expect(names).toContain(toolCall.function.name);
  const args = JSON.parse(toolCall.function.arguments);
  expect(ajv.validate(PARAMETERS.get(toolCall.function.name)!, args)).toBe(true);
}

async function streamed(extra: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], temperature: 0, max_tokens: 64, stream: true, ...extra }),
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n\n')
    .map((block) => block.replace(/^data: /, '').trim())
    .filter((data) => data && data !== '[DONE]')
    .map((data) => JSON.parse(data));
}

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF response_format', () => {
  it('json_schema: the answer parses and validates against the schema', async () => {
    const res = await chat({ response_format: { type: 'json_schema', json_schema: { name: 'weather', strict: true, schema: WEATHER } } });
    expect(res.status).toBe(200);
    const choice = res.body.choices[0];
    expect(choice.finish_reason).toBe('stop');
    expect(ajv.validate(WEATHER, JSON.parse(choice.message.content))).toBe(true);
  }, SLOW);

  it('json_object: the answer is held to JSON from its first character (an object)', async () => {
    const res = await chat({ response_format: { type: 'json_object' }, max_tokens: 4 });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toMatch(/^\{/);
  }, SLOW);

  it('a json_schema without a schema object is refused, naming it', async () => {
    const res = await chat({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'response_format.json_schema.schema must be a JSON Schema object', param: 'response_format.json_schema.schema' });
  });
});

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF tools', () => {
  it('tool_choice required: the answer is one tool call to one of the tools, its arguments valid', async () => {
    const res = await chat({ tools: TOOLS, tool_choice: 'required' });
    expect(res.status).toBe(200);
    const choice = res.body.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    expectValidCall(choice.message.tool_calls[0], ['weather', 'time']);
  }, SLOW);

  it('a named function: the call is to that function', async () => {
    const res = await chat({ tools: TOOLS, tool_choice: { type: 'function', function: { name: 'time' } } });
    expect(res.status).toBe(200);
    expectValidCall(res.body.choices[0].message.tool_calls[0], ['time']);
  }, SLOW);

  it('on /v1/responses: a named function tool answers one function_call item, its arguments valid', async () => {
    const tools = [{ type: 'function', name: 'time', description: 'The time in a zone', parameters: TIME }];
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: MODEL, input: 'hello the world', temperature: 0, max_output_tokens: 64, tools, tool_choice: { type: 'function', name: 'time' } } });
    expect(res.status).toBe(200);
    expect(res.body.output).toHaveLength(1);
    const item = res.body.output[0];
    expect(item).toMatchObject({ type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: expect.stringMatching(/^call_/), name: 'time', status: 'completed' });
    expect(ajv.validate(TIME, JSON.parse(item.arguments))).toBe(true);
  }, SLOW);

  it('streamed: the call arrives as one tool-call delta with its index, then finish_reason tool_calls', async () => {
    const events = await streamed({ tools: TOOLS, tool_choice: { type: 'function', function: { name: 'weather' } } });
    const calls = events.flatMap((e) => e.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0].index).toBe(0);
    expectValidCall(calls[0], ['weather']);
    expect(events.map((e) => e.choices?.[0]?.delta?.content).filter(Boolean)).toEqual([]);
    expect(events.some((e) => e.choices?.[0]?.finish_reason === 'tool_calls')).toBe(true);
  }, SLOW);

  it('the conversation continues after a tool result; tool_choice none answers text', async () => {
    const res = await chat({ tools: TOOLS, tool_choice: 'none', max_tokens: 4 }, [
      { role: 'user', content: 'hello the world' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'time', arguments: '{"zone":"UTC"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"time":"12:00"}' },
    ]);
    expect(res.status).toBe(200);
    expect(typeof res.body.choices[0].message.content).toBe('string');
    expect(res.body.choices[0].message.tool_calls).toBeUndefined();
  }, SLOW);

  it('two tools with one name are refused, naming the second', async () => {
    const res = await chat({ tools: [...TOOLS, TOOLS[0]], tool_choice: 'required' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'tools[2].function.name "weather" is the name of an earlier tool',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param: 'tools[2].function.name',
    });
  });

  it('a named function that is not among the tools is refused', async () => {
    const res = await chat({ tools: TOOLS, tool_choice: { type: 'function', function: { name: 'stocks' } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'tool_choice names function "stocks", which is not in tools', param: 'tool_choice' });
  });
});

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF: what the runtime cannot honour', () => {
  it.each([
    ['n', { n: 2 }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 3 }],
    ['logit_bias', { logit_bias: { '12': 5 } }],
  ])('%s is refused with a 400 naming the field and the model', async (field, extra) => {
    const res = await chat(extra);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: `${field} is not supported by model ${MODEL} (served in-process by gguf)`, param: field });
  });

  it('an image part is refused, naming the part', async () => {
    const res = await chat({}, [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: `messages[0].content[1] is not supported by model ${MODEL} (served in-process by gguf)`, param: 'messages[0].content[1]' });
  });
});
