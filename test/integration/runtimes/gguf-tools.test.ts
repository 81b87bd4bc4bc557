/**
 * In-process GGUF chat with `tool_choice` auto (the default when tools are sent), through
 * node-llama-cpp's function calling, on two generated tiny llama models with random
 * weights: the catalog's instruct fixture, which answers text, and a model whose first
 * answer token is the ChatML wrapper's function-call prefix, so it calls a function every
 * time (greedy sampling under the grammar node-llama-cpp makes of the tools). What is
 * tested is what is deterministic: the shape of the answer, that the functions and the
 * conversation's calls and results reach the prompt (its token count), that the same
 * request answers the same, and that the AI SDK's tool loop runs against it.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, tool } from 'ai';
import { Ajv } from 'ajv';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { buildToolCallingLlama } from '../../fixtures/model-builders/gguf-llama.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';

let server: TestServer;
let modelsDir: string;
let key: string;

const TEXT_MODEL = 'LFM2.5-1.2B-Instruct';
/** The runtime serves catalog ids only: the calling model stands in for the catalog's other gguf id, from its own directory. */
const CALLER = 'LFM2.5-1.2B-Thinking';
const CALLER_DIR = 'tool-caller';
const ajv = new Ajv({ strict: false });
const SLOW = 180_000;

beforeAll(async () => {
  if (!GGUF_RUNTIMES_DIR) return;
  modelsDir = buildTestModels([TEXT_MODEL]);
  buildToolCallingLlama(path.join(modelsDir, CALLER_DIR, 'model.gguf'));
  server = await startTestServer({
    env: { MODELS_DIR: modelsDir, ...GGUF_RUNTIME_ENV },
    yaml: `models:\n  ${CALLER}:\n    path: ${CALLER_DIR}\n`,
  });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
}, 120_000);

// Closed value sets: under the grammar a random model would fill an open string to its cap.
const WEATHER = { type: 'object', properties: { sunny: { type: 'boolean' } }, required: ['sunny'], additionalProperties: false };
const TIME = { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'], additionalProperties: false };
const WEATHER_TOOL = { type: 'function', function: { name: 'weather', description: 'Weather in a city', parameters: WEATHER } };
const TIME_TOOL = { type: 'function', function: { name: 'time', description: 'The time in a zone', parameters: TIME } };
const TOOLS = [WEATHER_TOOL, TIME_TOOL];
const PARAMETERS = new Map<string, object>([
  ['weather', WEATHER],
  ['time', TIME],
]);
const QUESTION = [{ role: 'user', content: 'hello the world' }];

const chat = (model: string, extra: Record<string, unknown>, messages: unknown[] = QUESTION) =>
  call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model, messages, temperature: 0, max_tokens: 48, ...extra } });

function expectValidCall(toolCall: any) {
  expect(toolCall).toMatchObject({ id: expect.stringMatching(/^call_[A-Za-z0-9_-]+$/), type: 'function' });
  expect([...PARAMETERS.keys()]).toContain(toolCall.function.name);
  expect(typeof toolCall.function.arguments).toBe('string');
  expect(ajv.validate(PARAMETERS.get(toolCall.function.name)!, JSON.parse(toolCall.function.arguments))).toBe(true);
}

/** A choice without the call ids (fresh per answer), to compare two answers. */
const withoutIds = (choice: any) => ({
  ...choice,
  message: { ...choice.message, tool_calls: choice.message.tool_calls?.map(({ id: _id, ...rest }: any) => rest) },
});

async function streamed(model: string, extra: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model, messages: QUESTION, temperature: 0, max_tokens: 48, stream: true, ...extra }),
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n\n')
    .map((block) => block.replace(/^data: /, '').trim())
    .filter((data) => data && data !== '[DONE]')
    .map((data) => JSON.parse(data));
}

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF tool_choice auto: a model that answers text', () => {
  it('is accepted and answers its text (it never starts a call), the same twice at temperature 0', async () => {
    const first = await chat(TEXT_MODEL, { tools: TOOLS });
    expect(first.status).toBe(200);
    const choice = first.body.choices[0];
    expect(choice).toEqual({
      index: 0,
      message: { role: 'assistant', content: ' hello world', refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    });
    expect(first.body.usage.completion_tokens).toBe(2); // as without tools: the end-of-turn token is not output
    const second = await chat(TEXT_MODEL, { tools: TOOLS });
    expect(second.body.choices[0]).toEqual(choice);
    expect(second.body.usage).toEqual(first.body.usage);
  }, SLOW);

  it('the functions reach the prompt: more tools, more prompt tokens', async () => {
    const none = await chat(TEXT_MODEL, { max_tokens: 1 });
    const one = await chat(TEXT_MODEL, { tools: [WEATHER_TOOL], max_tokens: 1 });
    const two = await chat(TEXT_MODEL, { tools: TOOLS, max_tokens: 1 });
    expect([none.status, one.status, two.status]).toEqual([200, 200, 200]);
    expect(one.body.usage.prompt_tokens).toBeGreaterThan(none.body.usage.prompt_tokens);
    expect(two.body.usage.prompt_tokens).toBeGreaterThan(one.body.usage.prompt_tokens);
  }, SLOW);

  it('tool_choice auto set explicitly is the same as leaving it out', async () => {
    const implicit = await chat(TEXT_MODEL, { tools: TOOLS, max_tokens: 4 });
    const explicit = await chat(TEXT_MODEL, { tools: TOOLS, tool_choice: 'auto', max_tokens: 4 });
    expect(explicit.status).toBe(200);
    expect(withoutIds(explicit.body.choices[0])).toEqual(withoutIds(implicit.body.choices[0]));
    expect(explicit.body.usage).toEqual(implicit.body.usage);
  }, SLOW);

  it('two tools with one name are refused, naming the second', async () => {
    const res = await chat(TEXT_MODEL, { tools: [...TOOLS, TIME_TOOL] });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'tools[2].function.name "time" is the name of an earlier tool',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param: 'tools[2].function.name',
    });
  });

  it('a tool whose parameters are not a schema object is refused, naming it', async () => {
    const res = await chat(TEXT_MODEL, { tools: [{ type: 'function', function: { name: 'weather', parameters: 'sunny' } }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'tools[0].function.parameters must be a JSON Schema object', param: 'tools[0].function.parameters' });
  });
});

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF tool_choice auto: a model that calls a function', () => {
  it('answers one tool call (id call_…, arguments a JSON string valid against the parameters), finish_reason tool_calls', async () => {
    const res = await chat(CALLER, { tools: TOOLS });
    expect(res.status).toBe(200);
    const choice = res.body.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    expectValidCall(choice.message.tool_calls[0]);
    expect(res.body.usage.completion_tokens).toBeGreaterThan(0);

    const again = await chat(CALLER, { tools: TOOLS });
    expect(withoutIds(again.body.choices[0])).toEqual(withoutIds(choice));
    expect(again.body.choices[0].message.tool_calls[0].id).not.toBe(choice.message.tool_calls[0].id);
  }, SLOW);

  it('streamed: the call arrives as a tool-call delta with index 0, no text, then finish_reason tool_calls', async () => {
    const events = await streamed(CALLER, { tools: TOOLS });
    const calls = events.flatMap((e) => e.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0].index).toBe(0);
    expectValidCall(calls[0]);
    expect(events.map((e) => e.choices?.[0]?.delta?.content).filter(Boolean)).toEqual([]);
    expect(events.filter((e) => e.choices?.[0]?.finish_reason).map((e) => e.choices[0].finish_reason)).toEqual(['tool_calls']);
  }, SLOW);

  it('parallel_tool_calls false: at most one call', async () => {
    const res = await chat(CALLER, { tools: TOOLS, parallel_tool_calls: false });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.tool_calls).toHaveLength(1);
    expectValidCall(res.body.choices[0].message.tool_calls[0]);
  }, SLOW);

  it('a history with a call and its result is accepted, and the result reaches the prompt', async () => {
    const history = (result: string) => [
      ...QUESTION,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'time', arguments: '{"zone":"UTC"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: result },
    ];
    const short = await chat(CALLER, { tools: TOOLS }, history('{"time":"12:00"}'));
    const long = await chat(CALLER, { tools: TOOLS }, history('{"time":"12:00","zone":"UTC","day":"Monday"}'));
    expect([short.status, long.status]).toEqual([200, 200]);
    expect(long.body.usage.prompt_tokens).toBeGreaterThan(short.body.usage.prompt_tokens);
    for (const res of [short, long]) {
      const choice = res.body.choices[0];
      if (choice.finish_reason === 'tool_calls') choice.message.tool_calls.forEach(expectValidCall);
      else expect(typeof choice.message.content).toBe('string');
    }
  }, SLOW);

  it('on /v1/responses: the call is a function_call output item', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', {
      key,
      body: { model: CALLER, input: 'hello the world', tools: [{ type: 'function', name: 'time', parameters: TIME }], temperature: 0, max_output_tokens: 48 },
    });
    expect(res.status).toBe(200);
    const calls = res.body.output.filter((item: any) => item.type === 'function_call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ call_id: expect.stringMatching(/^call_/), name: 'time' });
    expect(ajv.validate(TIME, JSON.parse(calls[0].arguments))).toBe(true);
  }, SLOW);

  it('the AI SDK tool loop runs: the call is executed, its result goes back, the model answers again', async () => {
    const provider = createOpenAICompatible({ name: 'sluice', baseURL: `${server.baseUrl}/v1`, apiKey: key, includeUsage: true });
    const ran: string[] = [];
    const time = tool({
      description: 'The time in a zone',
      inputSchema: z.object({ zone: z.enum(['UTC', 'CET']) }),
      execute: async ({ zone }) => {
        ran.push(zone);
        return { zone, time: '12:00' };
      },
    });
    const result = await generateText({
      model: provider.chatModel(CALLER),
      tools: { time },
      stopWhen: isStepCount(2),
      temperature: 0,
      maxOutputTokens: 48,
      prompt: 'What time is it?',
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.finishReason).toBe('tool-calls');
    expect(result.steps[0]!.toolCalls.map((c) => c.toolName)).toEqual(['time']);
    // The model calls again on the second round (it always does); each call was run.
    expect(ran).toEqual(result.steps.flatMap((step) => step.toolCalls.map((c) => (c.input as { zone: string }).zone)));
    expect(ran.every((zone) => zone === 'UTC' || zone === 'CET')).toBe(true);
    expect(result.steps[1]!.usage.inputTokens).toBeGreaterThan(result.steps[0]!.usage.inputTokens!);
  }, SLOW);

  it('the AI SDK against the text model: generateText with tools ends in text', async () => {
    const provider = createOpenAICompatible({ name: 'sluice', baseURL: `${server.baseUrl}/v1`, apiKey: key });
    const time = tool({ inputSchema: z.object({ zone: z.enum(['UTC', 'CET']) }), execute: async ({ zone }) => ({ zone }) });
    const result = await generateText({ model: provider.chatModel(TEXT_MODEL), tools: { time }, temperature: 0, maxOutputTokens: 16, prompt: 'hello the world' });
    expect(result.finishReason).toMatch(/^(stop|length)$/);
    expect(typeof result.text).toBe('string');
  }, SLOW);
});
