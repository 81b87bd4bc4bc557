/**
 * Real clients against models served by the hosted protocols: the `openai` SDK, the
 * Vercel AI SDK and (on Sluice's Messages wire) `@anthropic-ai/sdk` call an Azure OpenAI model (the v1 API, the classic deployment form with
 * a key file, and an Entra bearer token) and an Anthropic model, streamed and not, each
 * with a tool round trip. The fakes on loopback check the auth each provider expects.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { fail, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { toolLoop } from '../../helpers/tool-loop-engine.js';
import { startFakeAzure, type FakeAzure } from '../../helpers/fake-azure.js';
import { startFakeAnthropic, TOOL_ANSWER, type FakeAnthropic } from '../../helpers/fake-anthropic.js';

const AZURE_KEY = 'azure-key-0123456789abcdef0123';
const AZURE_TOKEN = 'eyJ0eXAiOiJKV1Qi.entra-token-0123456789';
const ANTHROPIC_KEY = 'sk-ant-api03-clients-0123456789abcdef';
const GROQ_KEY = 'gsk_clients_0123456789abcdef';
const CALL_ID = { azure: 'call_oslo', anthropic: 'toolu_oslo' };

let engine: FakeUpstream;
let azure: FakeAzure;
let anthropic: FakeAnthropic;
let server: TestServer;
let client: OpenAI;
let provider: ReturnType<typeof createOpenAICompatible>;
let tenantKey: string;

function yaml(keyFile: string): string {
  return `models:
  azure-gpt:
    kind: chat
    provider: azure
    base_url: ${azure.baseUrl}
    upstream_model: gpt-4o
    api_key_env: AZURE_TEST_KEY
  azure-classic:
    kind: chat
    provider: azure
    base_url: ${azure.baseUrl}
    upstream_model: prod-gpt4o
    api_version: 2024-10-21
    api_key_file: ${keyFile}
    price: { input_per_million_usd: 2.5, output_per_million_usd: 10 }
  azure-entra:
    kind: chat
    provider: azure
    base_url: ${azure.baseUrl}
    upstream_model: gpt-4o
    auth: bearer
    api_key_env: AZURE_TEST_TOKEN
  claude:
    kind: chat
    provider: anthropic
    base_url: ${anthropic.baseUrl}
    upstream_model: claude-sonnet-4-5
    api_key_env: ANTHROPIC_TEST_KEY
  llama-groq:
    kind: chat
    provider: groq
    base_url: ${engine.baseUrl}
    upstream_model: llama-3.3-70b-versatile
    api_key_env: GROQ_TEST_KEY
`;
}

beforeAll(async () => {
  engine = await startFakeUpstream();
  [azure, anthropic] = await Promise.all([startFakeAzure(engine, { key: AZURE_KEY, token: AZURE_TOKEN }), startFakeAnthropic(ANTHROPIC_KEY)]);
  const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'sluice-key-')), 'azure.key');
  writeFileSync(keyFile, `${AZURE_KEY}\n`, { mode: 0o600 });
  server = await startTestServer({
    yaml: yaml(keyFile),
    env: { AZURE_TEST_KEY: AZURE_KEY, AZURE_TEST_TOKEN: AZURE_TOKEN, ANTHROPIC_TEST_KEY: ANTHROPIC_KEY, GROQ_TEST_KEY: GROQ_KEY, RATE_LIMIT_RPM: '1000000' },
  });
  const tenant = await server.newTenant({ balanceUsd: 100 });
  tenantKey = tenant.key;
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: tenant.key, maxRetries: 0 });
  provider = createOpenAICompatible({ name: 'sluice', baseURL: `${server.baseUrl}/v1`, apiKey: tenant.key, includeUsage: true });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([azure?.close(), anthropic?.close(), engine?.close()]);
});
beforeEach(() => {
  engine.reset();
  engine.setDefault('/chat/completions', toolLoop({ id: CALL_ID.azure, name: 'weather', arguments: '{"city":"Oslo"}' }, TOOL_ANSWER));
  azure.requests.length = 0;
  anthropic.reset();
});

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

/** What the provider's fake saw of the first call: where it went and how it was authenticated. */
const AZURE_SEEN: Record<string, { path: string; query: string | null; auth: [string, string] }> = {
  'azure-gpt': { path: '/openai/v1/chat/completions', query: null, auth: ['api-key', AZURE_KEY] },
  'azure-classic': { path: '/openai/deployments/prod-gpt4o/chat/completions', query: '2024-10-21', auth: ['api-key', AZURE_KEY] },
  'azure-entra': { path: '/openai/v1/chat/completions', query: null, auth: ['authorization', `Bearer ${AZURE_TOKEN}`] },
};

async function toolRoundTrip(model: string, stream: boolean): Promise<string> {
  const question: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
  const first = await client.chat.completions.create({ model, messages: question, tools: [weatherTool] });
  const message = first.choices[0]!.message;
  expect(message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } });
  const messages: OpenAI.ChatCompletionMessageParam[] = [...question, message as OpenAI.ChatCompletionMessageParam, { role: 'tool', tool_call_id: message.tool_calls![0]!.id, content: '{"degrees":21}' }];
  if (!stream) return (await client.chat.completions.create({ model, messages, tools: [weatherTool] })).choices[0]!.message.content!;
  let text = '';
  for await (const chunk of await client.chat.completions.create({ model, messages, tools: [weatherTool], stream: true })) text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

describe('the openai SDK', () => {
  for (const model of Object.keys(AZURE_SEEN)) {
    for (const stream of [false, true]) {
      it(`${model}: a tool round trip${stream ? ', the answer streamed' : ''}, sent where and as Azure expects`, async () => {
        expect(await toolRoundTrip(model, stream)).toBe(TOOL_ANSWER);
        const seen = AZURE_SEEN[model]!;
        expect(azure.requests).toHaveLength(2);
        for (const request of azure.requests) {
          expect(request.path).toBe(seen.path);
          expect(request.query.get('api-version')).toBe(seen.query);
          expect(request.headers[seen.auth[0]]).toBe(seen.auth[1]);
        }
        expect(azure.requests[0]!.body.model).toBe(model === 'azure-classic' ? 'prod-gpt4o' : 'gpt-4o');
        expect(azure.requests[1]!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: CALL_ID.azure, content: '{"degrees":21}' });
      });
    }
  }

  for (const stream of [false, true]) {
    it(`claude: a tool round trip${stream ? ', the answer streamed' : ''}`, async () => {
      expect(await toolRoundTrip('claude', stream)).toBe(TOOL_ANSWER);
      expect(anthropic.requests.map((r) => [r.path, r.headers['x-api-key'], r.headers['anthropic-version']])).toEqual([
        ['/v1/messages', ANTHROPIC_KEY, '2023-06-01'],
        ['/v1/messages', ANTHROPIC_KEY, '2023-06-01'],
      ]);
    });
  }
});

describe("@anthropic-ai/sdk on Sluice's Messages wire", () => {
  const weather: Anthropic.Tool = { name: 'weather', description: 'Current weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

  for (const model of ['claude', 'azure-gpt']) {
    for (const streamed of [false, true]) {
      it(`${model}: a tool round trip${streamed ? ', the answer streamed' : ''}`, async () => {
        const anthropicClient = new Anthropic({ apiKey: tenantKey, baseURL: server.baseUrl, maxRetries: 0 });
        const question: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
        const first = await anthropicClient.messages.create({ model, max_tokens: 200, tools: [weather], messages: question });
        expect(first.stop_reason).toBe('tool_use');
        const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
        expect([call.name, call.input]).toEqual(['weather', { city: 'Oslo' }]);
        const messages: Anthropic.MessageParam[] = [
          ...question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '{"degrees":21}' }] },
        ];
        let text: string;
        if (streamed) {
          const stream = anthropicClient.messages.stream({ model, max_tokens: 200, tools: [weather], messages });
          text = (await stream.finalMessage()).content.map((b) => (b.type === 'text' ? b.text : '')).join('');
        } else {
          const second = await anthropicClient.messages.create({ model, max_tokens: 200, tools: [weather], messages });
          text = second.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
        }
        expect(text).toBe(TOOL_ANSWER);
      });
    }
  }
});

describe("a block's cache_control on Sluice's Messages wire", () => {
  it('reaches the Anthropic provider on its block', async () => {
    const anthropicClient = new Anthropic({ apiKey: tenantKey, baseURL: server.baseUrl, maxRetries: 0 });
    await anthropicClient.messages.create({
      model: 'claude',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'A long, stable prefix', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'Hi' }] }],
    });
    expect(anthropic.requests[0]!.body.messages[0].content).toEqual([
      { type: 'text', text: 'A long, stable prefix', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Hi' },
    ]);
  });
});

describe('the openai SDK on the Responses API', () => {
  it('claude: a function call, its output sent back, the answer', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'weather', description: 'Current weather in a city', parameters: weatherTool.function.parameters!, strict: false }];
    const first = await client.responses.create({ model: 'claude', input: 'Weather in Oslo?', tools, store: false });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'weather', arguments: '{"city":"Oslo"}', call_id: CALL_ID.anthropic });
    const second = await client.responses.create({
      model: 'claude',
      tools,
      store: false,
      input: [{ role: 'user', content: 'Weather in Oslo?' }, call as OpenAI.Responses.ResponseFunctionToolCall, { type: 'function_call_output', call_id: CALL_ID.anthropic, output: '{"degrees":21}' }],
    });
    expect(second.output_text).toBe(TOOL_ANSWER);
    expect(anthropic.requests[1]!.body.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: CALL_ID.anthropic, content: '{"degrees":21}' }] });
  });
});

describe('Azure errors in Sluice meaning', () => {
  const ask = () => call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenantKey, body: { model: 'azure-gpt', messages: [{ role: 'user', content: 'Hi' }] } });

  it('keeps a prompt the content filter refused the client\'s 400, with the code content_filter', async () => {
    const message = "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.";
    engine.enqueue('/chat/completions', fail(400, message, { code: 'content_filter', param: 'prompt' }));
    const res = await ask();
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message, code: 'content_filter', param: 'prompt' });
  });

  it('keeps a 429 a 429', async () => {
    engine.enqueue('/chat/completions', { type: 'json', status: 429, body: { error: { message: 'Requests to the ChatCompletions_Create Operation have exceeded the rate limit', code: '429' } }, headers: { 'retry-after': '4' } });
    const res = await ask();
    expect(res.status).toBe(429);
    expect(res.body.error.message).toContain('have exceeded the rate limit');
  });

  it('answers a context-length refusal as 400 context_length_exceeded', async () => {
    engine.enqueue('/chat/completions', fail(400, "This model's maximum context length is 128000 tokens.", { code: 'context_length_exceeded', param: 'messages' }));
    const res = await ask();
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'context_length_exceeded' });
  });
});

describe('an OpenAI-compatible preset', () => {
  it('groq: the key goes as a bearer token, the model as its upstream name, priced from the catalog', async () => {
    expect(await toolRoundTrip('llama-groq', true)).toBe(TOOL_ANSWER);
    const received = engine.requests.filter((r) => r.path === '/chat/completions');
    expect(received.map((r) => [r.headers.authorization, r.body.model])).toEqual([
      [`Bearer ${GROQ_KEY}`, 'llama-3.3-70b-versatile'],
      [`Bearer ${GROQ_KEY}`, 'llama-3.3-70b-versatile'],
    ]);
    const catalog = await call(server.baseUrl, 'GET', '/v1/catalog', { key: tenantKey });
    expect(catalog.body.data.find((m: { id: string }) => m.id === 'llama-groq').price).toEqual({ input_per_million_usd: 0.59, output_per_million_usd: 0.79 });
  });
});

describe('the Vercel AI SDK', () => {
  const ran: string[] = [];
  const weather = tool({
    description: 'Current weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      ran.push(city);
      return { city, degrees: 21 };
    },
  });

  for (const model of ['azure-gpt', 'claude']) {
    it(`${model}: generateText runs the tool and answers`, async () => {
      ran.length = 0;
      const result = await generateText({ model: provider.chatModel(model), tools: { weather }, stopWhen: isStepCount(3), prompt: 'Weather in Oslo?' });
      expect(result.text).toBe(TOOL_ANSWER);
      expect(result.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['weather', { city: 'Oslo' }]]);
      expect(ran).toEqual(['Oslo']);
    });

    it(`${model}: streamText streams the tool call and the answer`, async () => {
      ran.length = 0;
      const result = streamText({ model: provider.chatModel(model), tools: { weather }, stopWhen: isStepCount(3), prompt: 'Weather in Oslo?' });
      let text = '';
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') text += part.text;
        else if (part.type === 'error') throw part.error;
      }
      expect(text).toBe(TOOL_ANSWER);
      expect(ran).toEqual(['Oslo']);
      expect(await result.finishReason).toBe('stop');
      expect((await result.totalUsage).outputTokens).toBeGreaterThan(0);
    });
  }
});
