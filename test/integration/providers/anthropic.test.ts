/**
 * The `anthropic` protocol against a fake Messages API on loopback (test/helpers/fake-anthropic.ts),
 * called through Sluice with the `openai` SDK: plain and streamed answers, a tool round
 * trip, images, JSON output, thinking, usage with cache reads and writes billed at the
 * catalog's prices (Anthropic's `input_tokens` excludes the cache), fields Messages cannot
 * carry, and each error class in Sluice's meaning.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { anthropicError, answer, startFakeAnthropic, TOOL_ANSWER, type FakeAnthropic } from '../../helpers/fake-anthropic.js';
import { usageOf } from '../inference/setup.js';

const KEY = 'sk-ant-api03-test-0123456789abcdefghij';
let fake: FakeAnthropic;
let server: TestServer;
let client: OpenAI;
let projectId: string;
let apiKey: string;

const yaml = (baseUrl: string) => `models:
  claude:
    kind: chat
    provider: anthropic
    base_url: ${baseUrl}
    upstream_model: claude-sonnet-4-5
    api_key_env: ANTHROPIC_TEST_KEY
    anthropic_beta: [interleaved-thinking-2025-05-14]
    context_window_fallbacks: [claude-long]
  claude-long:
    kind: chat
    provider: anthropic
    base_url: ${baseUrl}
    upstream_model: claude-opus-4-5
    api_key_env: ANTHROPIC_TEST_KEY
  claude-lenient:
    kind: chat
    provider: anthropic
    base_url: ${baseUrl}
    upstream_model: claude-haiku-4-5
    api_key_env: ANTHROPIC_TEST_KEY
    drop_params: true
`;

beforeAll(async () => {
  fake = await startFakeAnthropic(KEY);
  server = await startTestServer({ yaml: yaml(fake.baseUrl), env: { ANTHROPIC_TEST_KEY: KEY, RATE_LIMIT_RPM: '1000000' } });
  ({ projectId, key: apiKey } = await server.newTenant({ balanceUsd: 100 }));
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

const recordOf = async (requestId: string | null) => (await usageOf(server, projectId)).find((r) => r.requestId === requestId);
const weatherTool = {
  type: 'function' as const,
  function: { name: 'weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('anthropic protocol: answers', () => {
  it('translates a chat call to Messages with the key, the version and the beta flags, and the answer back', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'claude', max_tokens: 300, temperature: 0.2, stop: ['END'], messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe(TOOL_ANSWER);
    expect(data.choices[0]!.finish_reason).toBe('stop');
    expect(data.model).toBe('claude');
    expect(data.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    const received = fake.requests[0]!;
    expect(received.path).toBe('/v1/messages');
    expect(received.headers['x-api-key']).toBe(KEY);
    expect(received.headers['anthropic-version']).toBe('2023-06-01');
    expect(received.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(received.headers.authorization).toBeUndefined();
    expect(received.body).toEqual({
      model: 'claude-sonnet-4-5',
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      max_tokens: 300,
      temperature: 0.2,
      stop_sequences: ['END'],
    });
    // 12 in at $3/M and 7 out at $15/M: the catalog's price of claude-sonnet-4-5.
    expect(await recordOf(response.headers.get('x-request-id'))).toMatchObject({ model: 'claude', deployment: 'claude', inputTokens: 12, outputTokens: 7, costMicros: 141 });
  });

  it("bills cache reads and writes at their own prices: Anthropic's input_tokens excludes them", async () => {
    fake.enqueue(answer([{ type: 'text', text: 'cached' }], { usage: { input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 50 } }));
    const { data, response } = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    // The input the client sees counts every input token, as OpenAI's prompt_tokens does.
    expect(data.usage).toMatchObject({ prompt_tokens: 1300, completion_tokens: 50 });
    // 100 × $3 + 1000 cache reads × $0.30 + 200 cache writes × $3.75 + 50 × $15, per million.
    expect(await recordOf(response.headers.get('x-request-id'))).toMatchObject({ inputTokens: 1300, cachedInputTokens: 1000, cacheWriteTokens: 200, outputTokens: 50, costMicros: 300 + 300 + 750 + 750 });
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(1000);
  });

  it('streams text deltas, the finish reason and the usage', async () => {
    fake.enqueue(answer([{ type: 'text', text: 'Streaming from Claude' }], { usage: { input_tokens: 20, output_tokens: 4, cache_read_input_tokens: 10 } }));
    const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Streaming from Claude');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 4 });
    expect(fake.requests[0]!.body.stream).toBe(true);
  });

  it('carries thinking as reasoning_content, and reasoning_effort as a thinking budget', async () => {
    fake.enqueue(answer([{ type: 'thinking', thinking: 'Let me think.', signature: 'sig' }, { type: 'text', text: '42' }]));
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: apiKey,
      body: { model: 'claude', max_tokens: 8000, reasoning_effort: 'medium', messages: [{ role: 'user', content: 'Answer?' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message).toMatchObject({ content: '42', reasoning_content: 'Let me think.' });
    expect(fake.requests[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
  });

  it('sends image parts as image blocks and json_schema output as output_config.format', async () => {
    const schema = { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'], additionalProperties: false };
    fake.enqueue(answer([{ type: 'text', text: '{"colour":"red"}' }]));
    const completion = await client.chat.completions.create({
      model: 'claude',
      response_format: { type: 'json_schema', json_schema: { name: 'colour', schema } },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What colour?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ colour: 'red' });
    expect(fake.requests[0]!.body.messages[0].content).toEqual([
      { type: 'text', text: 'What colour?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
    expect(fake.requests[0]!.body.output_config).toEqual({ format: { type: 'json_schema', schema } });
  });
});

describe('anthropic protocol: turns Messages would refuse', () => {
  it("keeps a content part's cache_control on its block", async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: apiKey,
      body: { model: 'claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'A long, stable prefix', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'The question' }] }] },
    });
    expect(res.status).toBe(200);
    expect(fake.requests[0]!.body.messages[0].content).toEqual([
      { type: 'text', text: 'A long, stable prefix', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'The question' },
    ]);
  });

  it('sends a system prompt with cache_control as text blocks', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: apiKey,
      body: {
        model: 'claude',
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Stable instructions', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: 'Hi' },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(fake.requests[0]!.body.system).toEqual([{ type: 'text', text: 'Stable instructions', cache_control: { type: 'ephemeral' } }]);
  });

  it('joins consecutive user turns into one', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: apiKey,
      body: { model: 'claude', messages: [{ role: 'user', content: 'One' }, { role: 'user', content: 'Two' }] },
    });
    expect(res.status).toBe(200);
    expect(fake.requests[0]!.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'One' }, { type: 'text', text: 'Two' }] }]);
  });
});

describe('anthropic protocol: a tool round trip', () => {
  for (const stream of [false, true]) {
    it(`calls the tool and answers with its result${stream ? ', streamed' : ''}`, async () => {
      const question: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
      const first = await client.chat.completions.create({ model: 'claude', messages: question, tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false });
      const calls = first.choices[0]!.message.tool_calls!;
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');
      expect(calls).toEqual([{ id: 'toolu_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }]);
      expect(fake.requests[0]!.body.tools).toEqual([{ name: 'weather', description: 'Current weather in a city', input_schema: weatherTool.function.parameters }]);
      expect(fake.requests[0]!.body.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
      const messages: OpenAI.ChatCompletionMessageParam[] = [...question, first.choices[0]!.message as OpenAI.ChatCompletionMessageParam, { role: 'tool', tool_call_id: 'toolu_oslo', content: '{"degrees":21}' }];
      let text = '';
      if (stream) {
        for await (const chunk of await client.chat.completions.create({ model: 'claude', messages, tools: [weatherTool], stream: true })) text += chunk.choices[0]?.delta.content ?? '';
      } else text = (await client.chat.completions.create({ model: 'claude', messages, tools: [weatherTool] })).choices[0]!.message.content!;
      expect(text).toBe(TOOL_ANSWER);
      expect(fake.requests[1]!.body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_oslo', name: 'weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_oslo', content: '{"degrees":21}' }] },
      ]);
    });
  }

  it('streams a tool call as tool_calls deltas', async () => {
    const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], stream: true });
    let args = '';
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      name ??= call?.function?.name;
      args += call?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('weather');
    expect(JSON.parse(args)).toEqual({ city: 'Oslo' });
    expect(finish).toBe('tool_calls');
  });
});

describe('anthropic protocol: what Messages cannot carry', () => {
  it('refuses logit_bias with 400 naming the field and the provider', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude', logit_bias: { '50256': -100 }, messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'logit_bias' });
    expect(res.body.error.message).toBe('logit_bias is not supported by provider anthropic (model claude); remove it, or set models.claude.drop_params: true to drop what the provider cannot carry');
    expect(fake.requests).toHaveLength(0);
  });

  it('drops it when the model has drop_params: true', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: apiKey,
      body: { model: 'claude-lenient', logit_bias: { '1': 5 }, seed: 7, presence_penalty: 0, messages: [{ role: 'user', content: 'Hi' }] },
    });
    expect(res.status).toBe(200);
    expect(Object.keys(fake.requests[0]!.body).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  it('refuses an audio part even with drop_params: true (dropping it would change the question)', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: apiKey,
      body: { model: 'claude-lenient', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('messages[].content[].type input_audio is not supported by provider anthropic (model claude-lenient); remove it');
  });
});

describe('anthropic protocol: errors in Sluice meaning', () => {
  it('keeps a 429 a 429 with its Retry-After', async () => {
    fake.enqueue(anthropicError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', { 'retry-after': '7' }));
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude-lenient', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).toBe(429);
    expect(res.body.error.message).toContain('rate_limit_error: Number of request tokens has exceeded your per-minute rate limit');
  });

  it('answers 502 for 529 overloaded_error once the deployment is exhausted', async () => {
    fake.enqueue(...Array.from({ length: 5 }, () => anthropicError(529, 'overloaded_error', 'Overloaded')));
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude-long', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'upstream_error' });
    expect(res.body.error.message).toContain('is overloaded (overloaded_error: Overloaded)');
  });

  it('sends a prompt too long for the model to its context_window_fallbacks', async () => {
    fake.enqueue(anthropicError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'));
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude', messages: [{ role: 'user', content: 'A long one' }] } });
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('claude-long');
    expect(fake.requests.map((r) => r.body.model)).toEqual(['claude-sonnet-4-5', 'claude-opus-4-5']);
  });

  it('answers a refusal as finish_reason content_filter with the refusal', async () => {
    fake.enqueue(answer([], { stopReason: 'refusal' }));
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude-lenient', messages: [{ role: 'user', content: 'Something bad' }] } });
    expect(res.status).toBe(200);
    expect(res.body.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: null, refusal: 'The provider declined to answer.' } });
  });

  it('keeps a bad request the client’s 400 with the provider message', async () => {
    fake.enqueue(anthropicError(400, 'invalid_request_error', 'messages: roles must alternate'));
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude-lenient', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'messages: roles must alternate', code: 'invalid_request_error' });
  });

  it('fails a stream cut before message_stop instead of ending it as if answered', async () => {
    fake.enqueue({ type: 'cut' });
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-lenient', stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const text = await res.text();
    expect(text).toContain('"content":"Hel"');
    expect(text).toContain('the stream ended before message_stop');
    expect(text).not.toContain('"finish_reason":"stop"');
  });
});
