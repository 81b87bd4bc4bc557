/**
 * The Vercel AI SDK (`@ai-sdk/openai`, chat completions) against a model served by the
 * `bedrock` protocol: a generateText tool loop and a streamText tool loop, the fake
 * Bedrock answering a toolUse until the conversation carries its toolResult.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { answer, toolLoop } from '../../helpers/fake-bedrock.js';
import { startBedrockEnv, type BedrockEnv } from './bedrock-setup.js';

let env: BedrockEnv;
let provider: ReturnType<typeof createOpenAI>;

const ANSWER = 'It is 21 degrees in Oslo.';

beforeAll(async () => {
  env = await startBedrockEnv();
  provider = createOpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: env.key });
}, 30_000);
afterAll(async () => env?.close());
beforeEach(() => {
  env.bedrock.reset();
  env.bedrock.setDefault(toolLoop({ toolUseId: 'tooluse_oslo', name: 'weather', input: { city: 'Oslo' } }, ANSWER));
});

const ran: string[] = [];
const weather = tool({
  description: 'Current weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    ran.push(city);
    return { city, degrees: 21 };
  },
});

/** What Bedrock must have received on the second round: the call, then its result, after the question. */
const SECOND_ROUND = [
  { role: 'user', content: [{ text: 'Weather in Oslo?' }] },
  { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_oslo', name: 'weather', input: { city: 'Oslo' } } }] },
  { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_oslo', content: [{ text: '{"city":"Oslo","degrees":21}' }] } }] },
];

describe('the AI SDK on bedrock', () => {
  it('runs a generateText tool loop', async () => {
    ran.length = 0;
    const result = await generateText({ model: provider.chat('claude-bedrock'), prompt: 'Weather in Oslo?', tools: { weather }, stopWhen: isStepCount(3) });
    expect(result.text).toBe(ANSWER);
    expect(ran).toEqual(['Oslo']);
    expect(env.bedrock.requests).toHaveLength(2);
    expect(env.bedrock.requests[1]!.body.messages).toEqual(SECOND_ROUND);
    expect(result.totalUsage).toMatchObject({ inputTokens: 22, outputTokens: 8 });
  });

  it('runs a streamText tool loop', async () => {
    ran.length = 0;
    const result = streamText({ model: provider.chat('claude-bedrock'), prompt: 'Weather in Oslo?', tools: { weather }, stopWhen: isStepCount(3) });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe(ANSWER);
    expect(ran).toEqual(['Oslo']);
    expect(env.bedrock.requests.map((r) => r.operation)).toEqual(['converse-stream', 'converse-stream']);
    expect(env.bedrock.requests[1]!.body.messages).toEqual(SECOND_ROUND);
  });

  it('streams a plain answer with its usage', async () => {
    env.bedrock.setDefault(answer([{ text: 'Just text.' }], { usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } }));
    const result = streamText({ model: provider.chat('claude-bedrock'), prompt: 'Say something.' });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe('Just text.');
    expect(await result.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
  });
});
