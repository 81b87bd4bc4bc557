/**
 * Models served by the `bedrock` protocol, called with the `openai` SDK through Sluice's
 * chat completions: what the fake Bedrock received (Converse's shape, SigV4-signed), and
 * what the client got back (text, reasoning, tool calls, images, usage with cached
 * tokens), streamed and not.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { answer, TEST_AWS } from '../../helpers/fake-bedrock.js';
import { call } from '../../helpers/harness.js';
import { usageOf } from '../inference/setup.js';
import { CLAUDE_ID, startBedrockEnv, type BedrockEnv } from './bedrock-setup.js';

let env: BedrockEnv;
let client: OpenAI;

beforeAll(async () => {
  env = await startBedrockEnv();
  client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: env.key, maxRetries: 0 });
}, 30_000);
afterAll(async () => env?.close());
beforeEach(() => {
  env.bedrock.reset();
});

const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const OSLO_USE = { toolUseId: 'tooluse_oslo1', name: 'weather', input: { city: 'Oslo' } };
const CACHED_USAGE = { inputTokens: 20, outputTokens: 9, totalTokens: 1229, cacheReadInputTokens: 1000, cacheWriteInputTokens: 200 };

describe('chat completions on bedrock', () => {
  it('answers a plain chat: Converse gets the system, the messages and the sampling, signed with SigV4', async () => {
    const completion = await client.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello?' },
      ],
      max_tokens: 64,
      temperature: 0.2,
      stop: ['END'],
    });
    expect(completion.model).toBe('claude-bedrock');
    expect(completion.choices[0]!.message.content).toBe('Hello from Bedrock.');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
    const [request] = env.bedrock.requests;
    expect(request!.operation).toBe('converse');
    expect(request!.modelId).toBe(CLAUDE_ID);
    expect(request!.body).toEqual({
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'Hello?' }] }],
      inferenceConfig: { maxTokens: 64, temperature: 0.2, stopSequences: ['END'] },
    });
    expect(request!.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${TEST_AWS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request`));
    expect(request!.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
  });

  it('reports cached tokens: prompt_tokens counts cache reads and writes, cached_tokens the reads; the usage record agrees', async () => {
    env.bedrock.enqueue(answer([{ text: 'Cached.' }], { usage: CACHED_USAGE }));
    const raw = await client.chat.completions.create({ model: 'claude-bedrock', messages: [{ role: 'user', content: 'Again?' }] }).withResponse();
    expect(raw.data.usage).toMatchObject({ prompt_tokens: 1220, completion_tokens: 9, total_tokens: 1229, prompt_tokens_details: { cached_tokens: 1000 } });
    const record = (await usageOf(env.server, env.projectId)).find((r) => r.requestId === raw.response.headers.get('x-request-id'));
    expect(record).toMatchObject({ model: 'claude-bedrock', deployment: 'bedrock-use1', inputTokens: 1220, outputTokens: 9, status: 200 });
  });

  it('streams text and reasoning from ConverseStream, the usage (with cached tokens) last', async () => {
    env.bedrock.enqueue(answer([{ reasoningContent: { reasoningText: { text: 'Think first.', signature: 'sig-1' } } }, { text: 'One two three.' }], { usage: CACHED_USAGE }));
    const stream = await client.chat.completions.create({
      model: 'claude-bedrock',
      messages: [{ role: 'user', content: 'Count.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let reasoning = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      text += delta?.content ?? '';
      reasoning += delta?.reasoning_content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('One two three.');
    expect(reasoning).toBe('Think first.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 1220, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 1000 } });
    expect(env.bedrock.requests[0]!.operation).toBe('converse-stream');
  });

  it('carries a tool round trip: tools as toolSpec, the call back as tool_calls, the result as a toolResult block', async () => {
    env.bedrock.enqueue(answer([{ text: 'Let me look.' }, { toolUse: OSLO_USE }]));
    const first = await client.chat.completions.create({
      model: 'claude-bedrock',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
    });
    const message = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.tool_calls).toEqual([{ id: 'tooluse_oslo1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' }, index: 0 }]);
    expect(env.bedrock.requests[0]!.body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'weather', description: 'Current weather in a city', inputSchema: { json: WEATHER_TOOL.function.parameters } } }],
      toolChoice: { auto: {} },
    });

    env.bedrock.enqueue(answer([{ text: 'It is 21 degrees in Oslo.' }]));
    const second = await client.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: message.content, tool_calls: message.tool_calls },
        { role: 'tool', tool_call_id: 'tooluse_oslo1', content: '{"degrees":21}' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.choices[0]!.message.content).toBe('It is 21 degrees in Oslo.');
    expect(env.bedrock.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [{ text: 'Let me look.' }, { toolUse: { toolUseId: 'tooluse_oslo1', name: 'weather', input: { city: 'Oslo' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_oslo1', content: [{ text: '{"degrees":21}' }] } }] },
    ]);
  });

  it('streams a tool call: its id and name first, then its arguments in pieces', async () => {
    env.bedrock.enqueue(answer([{ toolUse: OSLO_USE }]));
    const stream = await client.chat.completions.create({ model: 'claude-bedrock', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [WEATHER_TOOL], stream: true });
    const calls: Array<{ id?: string; name?: string; arguments: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        const entry = (calls[call.index] ??= { arguments: '' });
        if (call.id) entry.id = call.id;
        if (call.function?.name) entry.name = call.function.name;
        entry.arguments += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toEqual([{ id: 'tooluse_oslo1', name: 'weather', arguments: '{"city":"Oslo"}' }]);
    expect(finish).toBe('tool_calls');
  });

  it('sends an image given as a data: URL as Converse image bytes', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    await client.chat.completions.create({
      model: 'claude-bedrock',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
          ],
        },
      ],
    });
    expect(env.bedrock.requests[0]!.body.messages).toEqual([
      { role: 'user', content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: png.toString('base64') } } }] },
    ]);
  });

  it('maps response_format json_schema and reasoning_effort to outputConfig', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    await client.chat.completions.create({
      model: 'claude-bedrock',
      messages: [{ role: 'user', content: 'JSON please' }],
      response_format: { type: 'json_schema', json_schema: { name: 'reply', schema } },
      reasoning_effort: 'high',
    });
    expect(env.bedrock.requests[0]!.body.outputConfig).toEqual({
      textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'reply' } } },
      effort: 'high',
    });
  });

  it('lists the model in the console\'s catalog with its protocol, readiness and price', async () => {
    const res = await call(env.server.baseUrl, 'GET', '/v1/catalog', { key: env.key });
    expect(res.body.data.find((m: { id: string }) => m.id === 'claude-bedrock')).toMatchObject({
      runtime: 'bedrock',
      upstream: true,
      ready: true,
      price: { input_per_million_usd: 3, output_per_million_usd: 15 },
    });
    expect(res.body.data.find((m: { id: string }) => m.id === 'claude-pair').deployments.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([
      ['pair-east', 'ready'],
      ['pair-west', 'ready'],
    ]);
  });
});

describe('other wires on bedrock', () => {
  it('responses.create: a function call and its output round trip, in the Responses wire', async () => {
    const weather: OpenAI.Responses.FunctionTool = { type: 'function', name: 'weather', description: 'Current weather in a city', parameters: WEATHER_TOOL.function.parameters, strict: true };
    env.bedrock.enqueue(answer([{ toolUse: OSLO_USE }]));
    const first = await client.responses.create({ model: 'claude-bedrock', input: 'Weather in Oslo?', tools: [weather] });
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', call_id: 'tooluse_oslo1', name: 'weather', arguments: '{"city":"Oslo"}' });
    expect(env.bedrock.requests[0]!.body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'weather', description: 'Current weather in a city', inputSchema: { json: WEATHER_TOOL.function.parameters }, strict: true } }],
    });

    env.bedrock.enqueue(answer([{ text: 'It is 21 degrees in Oslo.' }], { usage: CACHED_USAGE }));
    const second = await client.responses.create({
      model: 'claude-bedrock',
      tools: [weather],
      input: [{ role: 'user', content: 'Weather in Oslo?' }, call, { type: 'function_call_output', call_id: 'tooluse_oslo1', output: '{"degrees":21}' }],
    });
    expect(second.output_text).toBe('It is 21 degrees in Oslo.');
    expect(second.usage).toMatchObject({ input_tokens: 1220, output_tokens: 9, input_tokens_details: { cached_tokens: 1000 } });
    expect(env.bedrock.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_oslo1', name: 'weather', input: { city: 'Oslo' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_oslo1', content: [{ text: '{"degrees":21}' }] } }] },
    ]);
  });

  it('streams a fallback from a dead local engine to bedrock in the client\'s wire', async () => {
    const stream = await client.chat.completions.create({ model: 'local-llm', messages: [{ role: 'user', content: 'Hello?' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    const models = new Set<string>();
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      models.add(chunk.model);
    }
    expect(text).toBe('Hello from Bedrock.');
    expect([...models]).toEqual(['claude-bedrock']);
    expect(env.bedrock.requests[0]!.operation).toBe('converse-stream');
  });
});
