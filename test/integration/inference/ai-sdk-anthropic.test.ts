/**
 * The Vercel AI SDK's Anthropic provider (`@ai-sdk/anthropic`, unmodified) with `baseURL`
 * pointed at Sluice's `/v1`: it speaks the Messages API to Sluice, which runs the call on
 * an OpenAI-protocol engine on loopback that records every body it received. Plain text,
 * a tool loop (the SDK runs the tool and sends its result back) and a stream, each
 * checked in what the SDK returned and in what the engine was asked.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toolLoop } from '../../helpers/tool-loop-engine.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
let anthropic: ReturnType<typeof createAnthropic>;
let projectId: string;

const MODEL = 'gpt-oss-120b';
const OSLO_CALL = { id: 'call_oslo', name: 'weather', arguments: '{"city":"Oslo"}' };
const ANSWER = 'It is 21 degrees in Oslo.';

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(async () => {
  env.upstream.reset();
  const tenant = await env.server.newTenant();
  projectId = tenant.projectId;
  anthropic = createAnthropic({ baseURL: `${env.server.baseUrl}/v1`, apiKey: tenant.key });
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
const headersSeen = () => env.upstream.requests.filter((r) => r.path === '/chat/completions').map((r) => r.headers);

/** The text of a chat message's content, a string or text parts. */
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : (content as Array<{ type: string; text?: string }>).map((p) => p.text ?? '').join('');

describe('@ai-sdk/anthropic generateText', () => {
  it('text: the answer, its usage and stop reason; the engine got the prompt, system and limits', async () => {
    const result = await generateText({
      model: anthropic(MODEL),
      system: 'Be brief.',
      prompt: 'Hello',
      maxOutputTokens: 300,
      temperature: 0.2,
    });
    expect(result.text).toBe('Hello from the fake upstream.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 11, outputTokens: 7 });
    expect(result.response.modelId).toBe(MODEL);

    expect(bodies()).toHaveLength(1);
    const [body] = bodies();
    expect(body.model).toBe('openai/gpt-oss-120b');
    expect(body.temperature).toBe(0.2);
    expect(body.max_completion_tokens ?? body.max_tokens).toBe(300);
    expect(body.messages.map((m: any) => [m.role, textOf(m.content)])).toEqual([
      ['system', 'Be brief.'],
      ['user', 'Hello'],
    ]);
    expect(headersSeen()[0]!['x-api-key']).toBeUndefined();
    const records = await usageOf(env.server, projectId);
    expect(records.map((r) => [r.model, r.status, r.inputTokens, r.outputTokens])).toEqual([[MODEL, 200, 11, 7]]);
    expect(records[0]!.route).toMatch(/messages$/);
  });

  it('a tool loop: the tool reaches the engine as a function, the call comes back as tool_use, its result goes back as a tool message', async () => {
    env.upstream.setDefault('/chat/completions', toolLoop(OSLO_CALL, ANSWER));
    ran.length = 0;
    const result = await generateText({ model: anthropic(MODEL), tools: { weather }, stopWhen: isStepCount(3), prompt: 'Weather in Oslo?' });
    expect(result.text).toBe(ANSWER);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.finishReason).toBe('tool-calls');
    expect(result.steps[0]!.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([['call_oslo', 'weather', { city: 'Oslo' }]]);
    expect(ran).toEqual(['Oslo']);

    const [first, second] = bodies();
    expect(bodies()).toHaveLength(2);
    expect(first.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather',
          description: 'Current weather in a city',
          parameters: expect.objectContaining({ type: 'object', properties: { city: { type: 'string', description: 'The city' } }, required: ['city'] }),
        },
      },
    ]);
    expect(second.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second.messages[1].tool_calls).toEqual([{ id: 'call_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }]);
    expect(second.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_oslo' });
    expect(JSON.parse(textOf(second.messages[2].content))).toEqual({ city: 'Oslo', degrees: 21 });
    expect((await usageOf(env.server, projectId)).map((r) => [r.status, r.inputTokens, r.outputTokens])).toEqual([
      [200, 11, 7],
      [200, 11, 7],
    ]);
  });
});

describe('@ai-sdk/anthropic streamText', () => {
  it('text: the deltas add up to the answer, usage and finish come from the event stream; the engine streamed', async () => {
    const result = streamText({ model: anthropic(MODEL), prompt: 'Hello' });
    const deltas: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') deltas.push(part.text);
      else if (part.type === 'error') throw part.error;
    }
    expect(deltas.join('')).toBe('Hello from the fake upstream.');
    expect(deltas.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({ inputTokens: 11, outputTokens: 7 });
    expect(bodies()).toHaveLength(1);
    expect(bodies()[0]).toMatchObject({ model: 'openai/gpt-oss-120b', stream: true });
    expect((await usageOf(env.server, projectId)).map((r) => [r.status, r.inputTokens, r.outputTokens])).toEqual([[200, 11, 7]]);
  });

  it('with a tool: the call streams as input_json deltas, the SDK runs it, the second round streams the answer', async () => {
    env.upstream.setDefault('/chat/completions', toolLoop(OSLO_CALL, ANSWER));
    ran.length = 0;
    const result = streamText({ model: anthropic(MODEL), tools: { weather }, stopWhen: isStepCount(3), prompt: 'Weather in Oslo?' });
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
    expect(bodies().map((b) => b.stream)).toEqual([true, true]);
    expect(bodies()[1]!.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
