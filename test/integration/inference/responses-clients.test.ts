/**
 * /v1/responses through the clients people point at it: the official `openai` SDK
 * (create with a function tool and its output round trip, the streaming helper, text
 * formats and parse() with zod) and the Vercel AI SDK's `openai` provider, which speaks
 * the Responses API (streamText, and a generateText tool loop). The fake engine records
 * the chat requests Sluice translated them into.
 */
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeLogprobs } from '../../helpers/fake-upstream.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let client: OpenAI;
let key: string;
let projectId: string;

const MODEL = 'gpt-oss-120b';
const WEATHER: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
const CHAT_WEATHER = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: WEATHER.parameters, strict: true },
};
const OSLO_CALL = { id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' };

beforeAll(async () => {
  env = await startInferenceEnv();
  const tenant = await env.server.newTenant();
  key = tenant.key;
  projectId = tenant.projectId;
  client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const lastBody = () => env.upstream.requests.at(-1)!.body;

describe('openai SDK', () => {
  it('responses.create: a function tool, its function_call, and the function_call_output round trip', async () => {
    env.upstream.chat({ toolCalls: [OSLO_CALL] });
    const first = await client.responses.create({ model: MODEL, input: 'Weather in Oslo?', tools: [WEATHER], tool_choice: 'required', parallel_tool_calls: false });
    expect(lastBody()).toMatchObject({ tools: [CHAT_WEATHER], tool_choice: 'required', parallel_tool_calls: false, messages: [{ role: 'user', content: 'Weather in Oslo?' }] });
    expect(first.status).toBe('completed');
    expect(first.tools).toEqual([{ type: 'function', name: 'get_weather', description: 'Current weather in a city', parameters: WEATHER.parameters, strict: true }]);
    expect(first.tool_choice).toBe('required');
    expect(first.output).toHaveLength(1);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toEqual({ type: 'function_call', id: call.id, call_id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' });
    expect(call.id).toMatch(/^fc_[0-9a-f]{48}$/);

    env.upstream.chat({ toolCalls: undefined, content: 'It is 21 degrees in Oslo.' });
    const second = await client.responses.create({
      model: MODEL,
      tools: [WEATHER],
      input: [
        { role: 'user', content: 'Weather in Oslo?' },
        call,
        { type: 'function_call_output', call_id: 'call_oslo', output: '{"degrees":21}' },
      ],
    });
    expect(second.output_text).toBe('It is 21 degrees in Oslo.');
    expect(lastBody().messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_oslo', content: '{"degrees":21}' },
    ]);
  });

  it('a named tool_choice and max_tool_calls: the engine gets the chat form, extra calls are left out', async () => {
    env.upstream.chat({ toolCalls: [OSLO_CALL, { id: 'call_rome', name: 'get_weather', arguments: '{"city":"Rome"}' }] });
    const response = await client.responses.create({ model: MODEL, input: 'Weather in Oslo and Rome?', tools: [WEATHER], tool_choice: { type: 'function', name: 'get_weather' }, max_tool_calls: 1 });
    expect(lastBody().tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(response.max_tool_calls).toBe(1);
    expect(response.tool_choice).toEqual({ type: 'function', name: 'get_weather' });
    expect(response.output.map((item) => (item as OpenAI.Responses.ResponseFunctionToolCall).call_id)).toEqual(['call_oslo']);
  });

  it('responses.stream: the events in order with increasing sequence numbers, and the final response', async () => {
    const stream = client.responses.stream({ model: MODEL, input: 'Say hello.' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => (e as OpenAI.Responses.ResponseTextDeltaEvent).delta);
    expect(text.join('')).toBe('Hello from the fake upstream.');
    expect(text.length).toBeGreaterThan(1);
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Hello from the fake upstream.');
    expect(final.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 });
    expect(lastBody()).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('text.format json_schema reaches the engine as response_format, and parse() reads the answer with zod', async () => {
    const Weather = z.object({ city: z.string(), degrees: z.number() });
    env.upstream.chat({ content: '{"city":"Oslo","degrees":21}' });
    const parsed = await client.responses.parse({ model: MODEL, input: 'Weather in Oslo as JSON', text: { format: zodTextFormat(Weather, 'weather') } });
    expect(parsed.output_parsed).toEqual({ city: 'Oslo', degrees: 21 });
    expect(lastBody().response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather', strict: true, schema: { type: 'object', required: ['city', 'degrees'] } } });
    expect(parsed.text?.format).toMatchObject({ type: 'json_schema', name: 'weather', strict: true });

    await client.responses.create({ model: MODEL, input: 'JSON please', text: { format: { type: 'json_object' } } });
    expect(lastBody().response_format).toEqual({ type: 'json_object' });
  });

  it('top_logprobs asks the engine for logprobs, which come back on the output_text part; sampling knobs are carried and echoed', async () => {
    // The SDK's types lack the penalties Open Responses has; the SDK sends them as given.
    const penalties = { presence_penalty: 0.5, frequency_penalty: -0.5 } as object;
    const response = await client.responses.create({ model: MODEL, input: 'Hi', top_logprobs: 2, temperature: 0.5, ...penalties, user: 'u1', service_tier: 'flex', safety_identifier: 's1', prompt_cache_key: 'k1' });
    expect(lastBody()).toMatchObject({ logprobs: true, top_logprobs: 2, temperature: 0.5, presence_penalty: 0.5, frequency_penalty: -0.5, user: 'u1', service_tier: 'flex', safety_identifier: 's1', prompt_cache_key: 'k1' });
    const part = (response.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(part.logprobs).toEqual(fakeLogprobs('Hello from the fake upstream.', 2).content);
    expect(response).toMatchObject({ top_logprobs: 2, temperature: 0.5, presence_penalty: 0.5, frequency_penalty: -0.5, user: 'u1', service_tier: 'flex', safety_identifier: 's1', prompt_cache_key: 'k1' });
  });

  it('image, file and audio parts reach the engine as chat parts', async () => {
    const response = await client.responses.create({
      model: MODEL,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in these?' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          ],
        },
      ],
    });
    expect(response.status).toBe('completed');
    expect(lastBody().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
        ],
      },
    ]);
    const [record] = await usageOf(env.server, projectId);
    expect(record).toMatchObject({ route: '/v1/responses', status: 200 });
  });
});

describe('AI SDK openai provider (Responses API)', () => {
  const provider = () => createOpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: key });

  it('streamText shows the text', async () => {
    const result = streamText({ model: provider().responses(MODEL), prompt: 'Say hello.' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('Hello from the fake upstream.');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).inputTokens).toBe(11);
    expect(lastBody().stream).toBe(true);
  });

  it('generateText runs a tool loop', async () => {
    env.upstream.enqueue('/chat/completions', {
      type: 'json',
      body: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
      },
    });
    env.upstream.chat({ content: 'It is 21 degrees in Oslo.' });
    const seen: unknown[] = [];
    const result = await generateText({
      model: provider().responses(MODEL),
      prompt: 'Weather in Oslo?',
      tools: {
        get_weather: tool({
          description: 'Current weather in a city',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
          execute: async (input) => {
            seen.push(input);
            return { degrees: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(seen).toEqual([{ city: 'Oslo' }]);
    expect(result.text).toBe('It is 21 degrees in Oslo.');
    expect(result.steps).toHaveLength(2);
    const second = env.upstream.requests.at(-1)!.body;
    expect(second.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_oslo', content: '{"degrees":21}' },
    ]);
    expect(second.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  });
});
