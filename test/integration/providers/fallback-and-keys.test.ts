/**
 * Spilling from a dead local engine to a hosted provider, and provider keys kept secret.
 * A local OpenAI-protocol deployment that refuses connections falls back to an Anthropic
 * model: the client's wire (chat completions, streamed or not, and Responses) is kept,
 * the usage record names the model and deployment that served, at that model's catalog
 * price. A provider that echoes the key back in its error body never gets it into the
 * answer, a log line (captured at trace level) or a span.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { deadEngineUrl } from '../../helpers/engine-process.js';
import { startFakeAnthropic, TOOL_ANSWER, type FakeAnthropic } from '../../helpers/fake-anthropic.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { usageOf } from '../inference/setup.js';

const KEY = 'sk-ant-api03-fallback-0123456789abcdefXYZ';
const WRONG_KEY = 'sk-ant-api03-revoked-9876543210zyxwvuABC';
let fake: FakeAnthropic;
let local: FakeUpstream;
let server: TestServer;
let apiKey: string;
let projectId: string;
const logLines: string[] = [];
const spans = new InMemorySpanExporter();

beforeAll(async () => {
  fake = await startFakeAnthropic(KEY);
  local = await startFakeUpstream();
  const dead = await deadEngineUrl();
  const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'sluice-key-')), 'anthropic.key');
  writeFileSync(keyFile, `${WRONG_KEY}\n`, { mode: 0o600 });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logLines.push(chunk.toString());
      callback();
    },
  });
  server = await startTestServer({
    yaml: `routing:
  cooldown: { failures: 1, window_seconds: 60, seconds: 30 }
  queue_timeout_ms: 100
models:
  local-busy:
    kind: chat
    deployments: [{ id: gpu-a, base_url: ${local.baseUrl}, max_concurrency: 1 }]
    fallbacks: [claude]
  local-llm:
    kind: chat
    base_url: ${dead}
    fallbacks: [claude]
  claude:
    kind: chat
    provider: anthropic
    base_url: ${fake.baseUrl}
    upstream_model: claude-haiku-4-5
    api_key_env: ANTHROPIC_TEST_KEY
  claude-revoked:
    kind: chat
    provider: anthropic
    base_url: ${fake.baseUrl}
    upstream_model: claude-haiku-4-5
    api_key_file: ${keyFile}
`,
    env: { ANTHROPIC_TEST_KEY: KEY, RATE_LIMIT_RPM: '1000000', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
    overrides: { logger: pino({ level: 'trace' }, sink), spanProcessors: [new SimpleSpanProcessor(spans)] },
  });
  ({ key: apiKey, projectId } = await server.newTenant({ balanceUsd: 100 }));
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([fake?.close(), local?.close()]);
});
beforeEach(() => fake.reset());

const recordOf = async (requestId: string | null) => (await usageOf(server, projectId)).find((r) => r.requestId === requestId);
/** claude-haiku-4-5 at the catalog's $1/M in and $5/M out: the fake reports 12 in, 7 out. */
const SERVED_BY_CLAUDE = { model: 'claude', deployment: 'claude', inputTokens: 12, outputTokens: 7, costMicros: 12 * 1 + 7 * 5, status: 200 };

describe('a dead local deployment falls back to Anthropic', () => {
  it('answers in chat completions, names the fallback, records the usage at its price', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'local-llm', messages: [{ role: 'user', content: 'Hello' }] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', model: 'claude', choices: [{ message: { role: 'assistant', content: TOOL_ANSWER }, finish_reason: 'stop' }] });
    expect(res.headers.get('x-sluice-fallback')).toBe('claude');
    expect(fake.requests[0]!.body.model).toBe('claude-haiku-4-5');
    expect(await recordOf(res.headers.get('x-request-id'))).toMatchObject(SERVED_BY_CLAUDE);
  });

  it('streams the fallback as chat completion chunks', async () => {
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-llm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    expect(events.map((e) => e.choices[0]?.delta?.content ?? '').join('')).toBe(TOOL_ANSWER);
    expect(events.every((e) => e.object === 'chat.completion.chunk' && e.model === 'claude')).toBe(true);
    expect(events.at(-1).usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    expect(await recordOf(res.headers.get('x-request-id'))).toMatchObject(SERVED_BY_CLAUDE);
  });

  it('answers in the Responses wire', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key: apiKey, body: { model: 'local-llm', input: 'Hello', store: false } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'response', status: 'completed', model: 'claude', usage: { input_tokens: 12, output_tokens: 7 } });
    expect(res.body.output.at(-1).content[0]).toMatchObject({ type: 'output_text', text: TOOL_ANSWER });
    expect(await recordOf(res.headers.get('x-request-id'))).toMatchObject({ ...SERVED_BY_CLAUDE, route: '/v1/responses' });
  });
});

describe('a saturated local deployment spills over to Anthropic', () => {
  it('sends the call that waited queue_timeout_ms for a slot to the fallback instead of answering 429', async () => {
    local.chat({ delayMs: 1000 });
    const chat = () => call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'local-busy', messages: [{ role: 'user', content: 'Hello' }] } });
    const first = chat();
    await local.waitForRequests(1, '/chat/completions');
    const second = await chat();
    expect(second.status).toBe(200);
    expect(second.body.model).toBe('claude');
    expect(second.headers.get('x-sluice-fallback')).toBe('claude');
    expect(await recordOf(second.headers.get('x-request-id'))).toMatchObject(SERVED_BY_CLAUDE);
    const answered = await first;
    expect([answered.status, answered.body.model]).toEqual([200, 'local-busy']);
    expect(local.count('/chat/completions')).toBe(1);
  });
});

describe('provider keys', () => {
  it('never reach the answer, a log line or a span, even when the provider echoes one back', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude-revoked', messages: [{ role: 'user', content: 'Hello' }] } });
    // The fake refused the key and put it in its message, as a careless provider might.
    expect(fake.requests[0]!.headers['x-api-key']).toBe(WRONG_KEY);
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe(
      'Upstream for model claude-revoked refused the request (status 401) (check the key of models.claude-revoked: api_key_env or api_key_file): authentication_error: invalid x-api-key: [redacted]',
    );
    const streamed = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-revoked', stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    const streamedText = await streamed.text();
    expect(streamed.status).toBe(502);
    // And the calls that succeed, whose key went out in every request.
    await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, body: { model: 'claude', messages: [{ role: 'user', content: 'Hello' }] } });
    const models = await call(server.baseUrl, 'GET', '/v1/models/claude', { key: apiKey });

    const logs = logLines.join('');
    expect(spans.getFinishedSpans().length).toBeGreaterThan(0);
    expect(logs).toContain('claude-revoked');
    const seen = [JSON.stringify(res.body), streamedText, JSON.stringify(models.body), logs, JSON.stringify(spans.getFinishedSpans().map((s) => [s.attributes, s.events, s.status]))];
    for (const text of seen) {
      for (const key of [KEY, WRONG_KEY]) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice(0, 20));
      }
    }
  });

  it('are redacted from an error event mid-stream', async () => {
    fake.enqueue({ type: 'stream_error', errorType: 'api_error', message: `upstream could not use key ${KEY}` });
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    const text = await res.text();
    expect(text).toContain('failed mid-stream (api_error: upstream could not use key [redacted])');
    expect(text).not.toContain(KEY);
    expect(logLines.join('')).not.toContain(KEY);
  });
});
