/**
 * The open wire, through the official `openai` SDK: what an upstream engine speaks reaches
 * it unchanged (tools, tool_choice, tool messages, content parts, n, logprobs, response
 * formats) and what it answers reaches the client (tool calls and their stream deltas,
 * several choices, logprobs, its fingerprint), with Sluice's own id, model and usage. The
 * fake engine records every body it received.
 */
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { FAKE_FINGERPRINT, fakeLogprobs } from '../../helpers/fake-upstream.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let client: OpenAI;
let key: string;
let projectId: string;

const MODEL = 'gpt-oss-120b';
const WEATHER_TOOL: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
  },
};
const OSLO_CALL = { id: 'call_oslo', name: 'weather', arguments: '{"city":"Oslo"}' };

beforeAll(async () => {
  env = await startInferenceEnv({ extra: { 'picky-engine': { kind: 'chat', drop_params: ['logit_bias', 'service_tier'] } } });
  const tenant = await env.server.newTenant();
  key = tenant.key;
  projectId = tenant.projectId;
  client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: tenant.key, maxRetries: 0 });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const lastBody = () => env.upstream.requests.at(-1)!.body;

describe('tools', () => {
  it('a tool call round trip: the tools reach the engine as sent, its call comes back, the result goes back to it', async () => {
    env.upstream.chat({ toolCalls: [OSLO_CALL] });
    const first = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(lastBody()).toMatchObject({ tools: [WEATHER_TOOL], tool_choice: 'required', parallel_tool_calls: false });
    expect(first.id).toMatch(/^chatcmpl-/);
    expect(first.id).not.toBe('chatcmpl-fake1');
    expect(first.model).toBe(MODEL);
    expect(first.system_fingerprint).toBe(FAKE_FINGERPRINT);
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([{ id: 'call_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }]);

    env.upstream.chat({ toolCalls: undefined, content: 'It is 21 degrees in Oslo.' });
    const second = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        choice.message as OpenAI.Chat.ChatCompletionAssistantMessageParam,
        { role: 'tool', tool_call_id: 'call_oslo', content: '{"degrees":21}' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.choices[0]!.message.content).toBe('It is 21 degrees in Oslo.');
    expect(lastBody().messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_oslo', content: '{"degrees":21}' },
    ]);
  });

  it('streamed: tool-call deltas keep their index, and the SDK assembles the call', async () => {
    env.upstream.chat({ toolCalls: [OSLO_CALL, { id: 'call_rome', name: 'weather', arguments: '{"city":"Rome"}' }] });
    const stream = client.chat.completions.stream({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Oslo and Rome?' }],
      tools: [WEATHER_TOOL],
      stream_options: { include_usage: true },
    });
    const indexes: number[] = [];
    stream.on('chunk', (chunk) => {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) indexes.push(delta.index);
    });
    const final = await stream.finalChatCompletion();
    expect(lastBody()).toMatchObject({ stream: true, tools: [WEATHER_TOOL] });
    expect(indexes).toEqual([0, 0, 0, 1, 1, 1]);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      // A strict tool's arguments are parsed by the SDK once the stream has assembled them.
      { id: 'call_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}', parsed_arguments: { city: 'Oslo' } } },
      { id: 'call_rome', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}', parsed_arguments: { city: 'Rome' } } },
    ]);
    expect(final.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
  });

  it('a task model cannot call tools: 400 naming the field and the model, and the engine is not called', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'deberta-v3-small', messages: [{ role: 'user', content: 'x' }], tools: [WEATHER_TOOL] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'tools is not supported by model deberta-v3-small (a classification model)',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'tools',
      },
    });
    expect(env.upstream.count()).toBe(0);
  });
});

describe('structured output', () => {
  it('parse() with a zod schema: the json_schema format reaches the engine, the SDK parses its answer', async () => {
    const Weather = z.object({ city: z.string(), degrees: z.number() });
    env.upstream.chat({ content: '{"city":"Oslo","degrees":21}' });
    const completion = await client.chat.completions.parse({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Oslo as JSON' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0]!.message.parsed).toEqual({ city: 'Oslo', degrees: 21 });
    expect(lastBody().response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'weather',
        strict: true,
        schema: {
          type: 'object',
          properties: { city: { type: 'string' }, degrees: { type: 'number' } },
          required: ['city', 'degrees'],
          additionalProperties: false,
          $schema: expect.any(String),
        },
      },
    });
  });
});

describe('content parts', () => {
  it('image, audio and file parts reach the engine as sent', async () => {
    const content: OpenAI.Chat.ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
      { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
      { type: 'file', file: { file_id: 'file-abc' } },
    ];
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content }] });
    expect(completion.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(lastBody().messages).toEqual([{ role: 'user', content }]);
  });
});

describe('choices and logprobs', () => {
  it('n with logprobs: every choice comes back with its logprobs, usage is the engine’s', async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello' }],
      n: 2,
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { '1234': -100 },
      seed: 7,
      user: 'end-user-1',
    });
    expect(lastBody()).toMatchObject({ n: 2, logprobs: true, top_logprobs: 2, logit_bias: { '1234': -100 }, seed: 7, user: 'end-user-1' });
    expect(completion.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'Hello from the fake upstream. (1)'],
      [1, 'Hello from the fake upstream. (2)'],
    ]);
    expect(completion.choices[0]!.logprobs).toEqual(fakeLogprobs('Hello from the fake upstream. (1)', 2));
    expect(completion.choices[1]!.logprobs).toEqual(fakeLogprobs('Hello from the fake upstream. (2)', 2));
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const [record] = await usageOf(env.server, projectId);
    expect(record).toMatchObject({ model: MODEL, inputTokens: 11, outputTokens: 7, status: 200 });
  });

  it('drop_params: the fields a model’s engine rejects never reach it; the rest do', async () => {
    await client.chat.completions.create({
      model: 'picky-engine',
      messages: [{ role: 'user', content: 'Hello' }],
      logit_bias: { '1234': -100 },
      service_tier: 'auto',
      seed: 7,
    });
    const body = lastBody();
    expect(body.seed).toBe(7);
    expect('logit_bias' in body).toBe(false);
    expect('service_tier' in body).toBe(false);
  });
});

describe('legacy completions', () => {
  it('completions.create: the prompt and the legacy fields reach the engine, its choices come back, metered like chat', async () => {
    const completion = await client.completions.create({
      model: MODEL,
      prompt: ['Once upon a time', 'In a galaxy'],
      suffix: 'The end.',
      echo: true,
      logprobs: 2,
      max_tokens: 20,
      n: 2,
    });
    expect(lastBody()).toEqual({
      model: 'openai/gpt-oss-120b',
      prompt: ['Once upon a time', 'In a galaxy'],
      suffix: 'The end.',
      echo: true,
      logprobs: 2,
      max_tokens: 20,
      n: 2,
    });
    expect(env.upstream.requests.at(-1)!.path).toBe('/completions');
    expect(completion.object).toBe('text_completion');
    expect(completion.id).toMatch(/^cmpl-/);
    expect(completion.id).not.toMatch(/fake/);
    expect(completion.model).toBe(MODEL);
    expect(completion.system_fingerprint).toBe(FAKE_FINGERPRINT);
    expect(completion.choices.map((c) => [c.index, c.text])).toEqual([
      [0, 'Once upon a timeHello from the fake upstream. (1)'],
      [1, 'Once upon a timeHello from the fake upstream. (2)'],
      [2, 'In a galaxyHello from the fake upstream. (3)'],
      [3, 'In a galaxyHello from the fake upstream. (4)'],
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const [record] = await usageOf(env.server, projectId);
    expect(record).toMatchObject({ model: MODEL, route: '/v1/completions', inputTokens: 11, outputTokens: 7, status: 200 });
  });

  it('completions.create with stream: true relays the engine’s chunks and ends with the usage', async () => {
    const stream = await client.completions.create({ model: MODEL, prompt: 'Say hello', stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    const ids = new Set<string>();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(lastBody()).toEqual({ model: 'openai/gpt-oss-120b', prompt: 'Say hello', stream: true, stream_options: { include_usage: true } });
    expect(text).toBe('Hello from the fake upstream.');
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect([...ids]).toHaveLength(1);
    expect([...ids][0]).toMatch(/^cmpl-/);
  });

  it('a task model is not served on /v1/completions: 400 naming the model, and the engine is not called', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/completions', { key, body: { model: 'deberta-v3-small', prompt: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'Model deberta-v3-small is not supported on /v1/completions; it serves chat models of an upstream engine',
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
    });
    expect(env.upstream.count()).toBe(0);
  });

  it('a prompt that is neither text nor tokens is refused with the field named', async () => {
    const res = await call(env.server.baseUrl, 'POST', '/v1/completions', { key, body: { model: MODEL, prompt: [{ text: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'prompt must be a string, an array of strings, or an array of tokens', param: 'prompt' });
  });
});
