/**
 * LangChain's `ChatOpenAI` pointed at Sluice: `bindTools` (the engine receives the tools,
 * the tool calls come back parsed) and `withStructuredOutput` with a zod schema, by its
 * default method (json_schema, for a model not named gpt-3/gpt-4) and by function calling,
 * against a fake engine that records every body it received.
 */
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolLoop } from '../../helpers/tool-loop-engine.js';
import { startInferenceEnv, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let model: ChatOpenAI;

const MODEL = 'gpt-oss-120b';
const OSLO_CALL = { id: 'call_oslo', name: 'weather', arguments: '{"city":"Oslo"}' };
const Weather = z.object({ city: z.string(), degrees: z.number() });

beforeAll(async () => {
  env = await startInferenceEnv();
  const tenant = await env.server.newTenant();
  model = new ChatOpenAI({ model: MODEL, apiKey: tenant.key, maxRetries: 0, configuration: { baseURL: `${env.server.baseUrl}/v1` } });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const weather = tool(async ({ city }) => JSON.stringify({ city, degrees: 21 }), {
  name: 'weather',
  description: 'Current weather in a city',
  schema: z.object({ city: z.string() }),
});

const received = () => env.upstream.requests.filter((r) => r.path === '/chat/completions');

describe('bindTools', () => {
  it('the tools reach the engine; the tool calls come back parsed; the tool result goes back', async () => {
    env.upstream.setDefault('/chat/completions', toolLoop(OSLO_CALL, 'It is 21 degrees in Oslo.'));
    const withTools = model.bindTools([weather]);
    const question = new HumanMessage('Weather in Oslo?');
    const first = await withTools.invoke([question]);
    expect(first.tool_calls).toEqual([{ id: 'call_oslo', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }]);
    expect(received()[0]!.body).toMatchObject({
      model: 'openai/gpt-oss-120b',
      tools: [{ type: 'function', function: { name: 'weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
    });

    const result = await weather.invoke(first.tool_calls![0]!);
    const final = await withTools.invoke([question, first, result]);
    expect(result).toBeInstanceOf(ToolMessage);
    expect(final).toBeInstanceOf(AIMessage);
    expect(final.content).toBe('It is 21 degrees in Oslo.');
    expect(final.tool_calls).toEqual([]);
    expect(received()[1]!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      // LangChain names the tool on its result; the engine receives that as sent.
      { role: 'tool', tool_call_id: 'call_oslo', name: 'weather', content: '{"city":"Oslo","degrees":21}' },
    ]);
  });

  it('streamed: the tool-call chunks assemble into a parsed call', async () => {
    env.upstream.setDefault('/chat/completions', toolLoop(OSLO_CALL, 'unused'));
    let message: Awaited<ReturnType<typeof model.invoke>> | undefined;
    for await (const chunk of await model.bindTools([weather]).stream([new HumanMessage('Weather in Oslo?')])) {
      message = message ? (message.concat(chunk) as typeof message) : chunk;
    }
    expect(received()[0]!.body.stream).toBe(true);
    expect(message!.tool_calls).toEqual([{ id: 'call_oslo', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }]);
  });
});

describe('withStructuredOutput', () => {
  it('by default asks for a json_schema response format, and parses the answer with the zod schema', async () => {
    env.upstream.chat({ content: '{"city":"Oslo","degrees":21}' });
    const structured = model.withStructuredOutput(Weather, { name: 'weather' });
    expect(await structured.invoke('Weather in Oslo as JSON')).toEqual({ city: 'Oslo', degrees: 21 });
    const body = received()[0]!.body;
    expect(body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: {
        name: 'weather',
        schema: { type: 'object', properties: { city: { type: 'string' }, degrees: { type: 'number' } }, required: ['city', 'degrees'] },
      },
    });
    expect(body.tools).toBeUndefined();
  });

  it('with method functionCalling: a forced tool call, whose arguments come back parsed', async () => {
    env.upstream.chat({ toolCalls: [{ id: 'call_w', name: 'weather', arguments: '{"city":"Oslo","degrees":21}' }] });
    const structured = model.withStructuredOutput(Weather, { name: 'weather', method: 'functionCalling' });
    expect(await structured.invoke('Weather in Oslo')).toEqual({ city: 'Oslo', degrees: 21 });
    const body = received()[0]!.body;
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } });
    expect(body.tools).toMatchObject([
      { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' }, degrees: { type: 'number' } } } } },
    ]);
    expect(body.response_format).toBeUndefined();
  });

  it('an answer that does not match the schema is the client’s error to raise, not a gateway failure', async () => {
    env.upstream.chat({ content: '{"city":"Oslo"}' });
    await expect(model.withStructuredOutput(Weather, { name: 'weather' }).invoke('Weather in Oslo as JSON')).rejects.toThrow(/degrees/);
    expect(received()).toHaveLength(1);
  });
});
