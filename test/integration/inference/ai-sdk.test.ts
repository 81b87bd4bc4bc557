/**
 * The Vercel AI SDK's `openai-compatible` provider pointed at Sluice: a `generateText`
 * tool loop (tool call → the SDK runs the tool → its result goes back → the final
 * answer) and `streamText` with a tool, against a fake engine that records every body it
 * received. Each round trip is one metered call.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolLoop } from '../../helpers/tool-loop-engine.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let provider: ReturnType<typeof createOpenAICompatible>;
let projectId: string;

const MODEL = 'gpt-oss-120b';
const OSLO_CALL = { id: 'call_oslo', name: 'weather', arguments: '{"city":"Oslo"}' };
const ANSWER = 'It is 21 degrees in Oslo.';
const WEATHER_PARAMETERS = {
  type: 'object',
  properties: { city: { type: 'string', description: 'The city' } },
  required: ['city'],
  additionalProperties: false,
  $schema: expect.any(String),
};

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(async () => {
  env.upstream.reset();
  env.upstream.setDefault('/chat/completions', toolLoop(OSLO_CALL, ANSWER));
  const tenant = await env.server.newTenant();
  projectId = tenant.projectId;
  provider = createOpenAICompatible({ name: 'sluice', baseURL: `${env.server.baseUrl}/v1`, apiKey: tenant.key, includeUsage: true });
});

const ran: string[] = [];
const weather = tool({
  description: 'Current weather in a city',
  inputSchema: z.object({ city: z.string().describe('The city') }),
  execute: async ({ city }) => {
    ran.push(city);
    return { city, degrees: 21 };
  },
});

const bodies = () => env.upstream.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body);

/** What the engine must have received on the second round: the call and the tool's result after the question. */
const SECOND_ROUND_MESSAGES = [
  { role: 'user', content: 'Weather in Oslo?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
  { role: 'tool', tool_call_id: 'call_oslo', content: '{"city":"Oslo","degrees":21}' },
];

describe('generateText', () => {
  it('a tool loop: the tool reaches the engine, its call is run, the result goes back, the final answer comes out', async () => {
    ran.length = 0;
    const result = await generateText({
      model: provider.chatModel(MODEL),
      tools: { weather },
      stopWhen: isStepCount(3),
      prompt: 'Weather in Oslo?',
    });
    expect(result.text).toBe(ANSWER);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.finishReason).toBe('tool-calls');
    expect(result.steps[0]!.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([['call_oslo', 'weather', { city: 'Oslo' }]]);
    expect(result.steps[0]!.toolResults.map((r) => r.output)).toEqual([{ city: 'Oslo', degrees: 21 }]);
    expect(ran).toEqual(['Oslo']);

    const [first, second] = bodies();
    expect(bodies()).toHaveLength(2);
    expect(first).toMatchObject({
      model: 'openai/gpt-oss-120b',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [{ type: 'function', function: { name: 'weather', description: 'Current weather in a city', parameters: WEATHER_PARAMETERS } }],
    });
    expect(second.messages).toEqual(SECOND_ROUND_MESSAGES);
    expect(second.tools).toEqual(first.tools);

    const records = await usageOf(env.server, projectId);
    expect(records.map((r) => [r.route, r.status, r.inputTokens, r.outputTokens])).toEqual([
      ['/v1/chat/completions', 200, 11, 7],
      ['/v1/chat/completions', 200, 11, 7],
    ]);
  });

  it('toolChoice names the function: the engine receives it in the OpenAI shape', async () => {
    await generateText({
      model: provider.chatModel(MODEL),
      tools: { weather },
      toolChoice: { type: 'tool', toolName: 'weather' },
      prompt: 'Weather in Oslo?',
    });
    expect(bodies()[0]!.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } });
  });
});

describe('streamText', () => {
  it('with a tool: the call streams as deltas, the SDK runs it, the second round streams the answer', async () => {
    ran.length = 0;
    const result = streamText({
      model: provider.chatModel(MODEL),
      tools: { weather },
      stopWhen: isStepCount(3),
      prompt: 'Weather in Oslo?',
    });
    let text = '';
    const calls: unknown[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') text += part.text;
      else if (part.type === 'tool-call') calls.push([part.toolCallId, part.toolName, part.input]);
      else if (part.type === 'error') throw part.error;
    }
    expect(text).toBe(ANSWER);
    expect(calls).toEqual([['call_oslo', 'weather', { city: 'Oslo' }]]);
    expect(ran).toEqual(['Oslo']);
    expect(await result.finishReason).toBe('stop');
    expect((await result.totalUsage).inputTokens).toBe(22);

    expect(bodies()).toHaveLength(2);
    for (const body of bodies()) expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(bodies()[1]!.messages).toEqual(SECOND_ROUND_MESSAGES);
    const records = await usageOf(env.server, projectId);
    expect(records.map((r) => [r.status, r.inputTokens, r.outputTokens])).toEqual([
      [200, 11, 7],
      [200, 11, 7],
    ]);
  });
});
