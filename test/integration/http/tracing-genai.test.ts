/**
 * Model calls in OpenTelemetry's GenAI conventions (OTEL_SEMCONV_STABILITY_OPT_IN=
 * gen_ai_latest_experimental), as a fake OTLP/HTTP collector on loopback receives them:
 * one `chat <model>` span per call on chat completions, Responses (streamed) and Messages,
 * with the conventions' attributes exactly; one `attempt <deployment>` span per attempt of
 * a call that was retried, then fell back, then streamed; and, without the opt-in, the
 * spans as before with no gen_ai attribute. Exported in protobuf (OTLP's default) with the
 * opt-in, in JSON without (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json). Each call carries its own traceparent, so the
 * spans of each are found by trace id once the server has flushed them on shutdown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer } from '../../helpers/harness.js';
import { fail, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startOtlpCollector, type CollectedSpan, type OtlpCollector } from '../../helpers/otlp-collector.js';

const PROVIDER_KEY = 'sk-provider-secret-0123456789abcdef';
const PROMPT = 'a prompt that stays out of spans';
const USAGE = { prompt_tokens: 7, completion_tokens: 3, cached_tokens: 2 };
const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
const STATUS_ERROR = 2;
/** The call span of one plain-llm chat answered with USAGE, exactly. */
const PLAIN_CALL = {
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.request.model': 'plain-llm',
  'gen_ai.response.model': 'plain-llm',
  'gen_ai.response.finish_reasons': ['stop'],
  'gen_ai.usage.input_tokens': 7,
  'gen_ai.usage.output_tokens': 3,
  'gen_ai.usage.cache_read.input_tokens': 2,
};

type ExportedSpan = CollectedSpan;

function yaml(plain: string, failing: string): string {
  const d = (id: string, baseUrl: string) => `      - { id: ${id}, base_url: ${baseUrl}, upstream_model: ${id}, api_key_env: PROVIDER_KEY }\n`;
  return `routing:
  retries: 2
models:
  plain-llm:
    kind: chat
    deployments:
${d('plain-a', plain)}  story-llm:
    kind: chat
    deployments:
${d('story-a', failing)}${d('story-b', failing)}    fallbacks: [backup-llm]
  backup-llm:
    kind: chat
    deployments:
${d('backup-a', plain)}`;
}

let traceNo = 0;
/** A fresh traceparent: the trace id names the call's spans. */
function newTrace(): { traceId: string; traceparent: string } {
  const traceId = (++traceNo).toString(16).padStart(32, 'a');
  return { traceId, traceparent: `00-${traceId}-00f067aa0ba902b7-01` };
}

const inTrace = (spans: ExportedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);
const childrenOf = (spans: ExportedSpan[], parent: ExportedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId).sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));

function one(spans: ExportedSpan[], name: string, kind?: number): ExportedSpan {
  const found = spans.filter((s) => s.name === name && (kind === undefined || s.kind === kind));
  expect(found, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

let plain: FakeUpstream;
let failing: FakeUpstream;

beforeAll(async () => {
  [plain, failing] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  plain.chat({ content: 'Hello there', usage: USAGE });
  failing.setDefault('/chat/completions', fail(503));
});
afterAll(async () => {
  await Promise.all([plain?.close(), failing?.close()]);
});

describe('with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental', () => {
  const traces = { chat: newTrace(), responses: newTrace(), messages: newTrace(), story: newTrace() };
  const statuses: Record<string, number> = {};
  let collector: OtlpCollector;
  let tenantKey: string;
  let plainPort: number;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    plainPort = Number(new URL(plain.baseUrl).port);
    const server = await startTestServer({
      yaml: yaml(plain.baseUrl, failing.baseUrl),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SEMCONV_STABILITY_OPT_IN: 'http,gen_ai_latest_experimental', PROVIDER_KEY },
    });
    try {
      const { key } = await server.newTenant({ balanceUsd: 10 });
      tenantKey = key;
      const post = (route: string, trace: { traceparent: string }, body: unknown) =>
        call(server.baseUrl, 'POST', route, { key, headers: { traceparent: trace.traceparent }, body });
      const messages = [{ role: 'user', content: PROMPT }];
      statuses.chat = (await post('/v1/chat/completions', traces.chat, { model: 'plain-llm', messages, prompt_cache_key: 'session-17' })).status;
      statuses.responses = (await post('/v1/responses', traces.responses, { model: 'plain-llm', input: PROMPT, stream: true, store: false })).status;
      statuses.messages = (await post('/v1/messages', traces.messages, { model: 'plain-llm', max_tokens: 50, messages })).status;
      statuses.story = (await post('/v1/chat/completions', traces.story, { model: 'story-llm', messages, stream: true, stream_options: { include_usage: true } })).status;
    } finally {
      // Shutting down flushes the batched spans to the collector.
      await server.close();
    }
  }, 60_000);
  afterAll(async () => {
    await collector?.close();
  });

  it('a chat completion: one CLIENT span "chat plain-llm" under the server span, with the conventions\' attributes exactly', () => {
    expect(statuses.chat).toBe(200);
    const spans = inTrace(collector.spans, traces.chat.traceId);
    const server = one(spans, 'POST /v1/chat/completions', SPAN_KIND.SERVER);
    const chat = one(spans, 'chat plain-llm');
    expect(chat.parentSpanId).toBe(server.spanId);
    expect(chat.kind).toBe(SPAN_KIND.CLIENT);
    expect(chat.attributes).toEqual({ ...PLAIN_CALL, 'gen_ai.conversation.id': 'session-17' });
    const [attempt, ...others] = childrenOf(spans, chat);
    expect(others).toEqual([]);
    expect(attempt!.name).toBe('attempt plain-a');
    expect(attempt!.kind).toBe(SPAN_KIND.INTERNAL);
    expect(attempt!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'plain-llm',
      'sluice.deployment': 'plain-a',
      'sluice.attempt': 1,
      'sluice.fallback': false,
      'server.address': '127.0.0.1',
      'server.port': plainPort,
    });
    // The HTTP request to the engine is the attempt's child; the inference.* span of tracing without the opt-in is gone.
    expect(childrenOf(spans, attempt!).map((s) => [s.name, s.kind])).toEqual([['POST /v1/chat/completions', SPAN_KIND.CLIENT]]);
    expect(spans.filter((s) => s.name.startsWith('inference.'))).toEqual([]);
  });

  it('a streamed Responses call: the same span, marked as a stream, with the time to its first chunk in seconds', () => {
    expect(statuses.responses).toBe(200);
    const spans = inTrace(collector.spans, traces.responses.traceId);
    const chat = one(spans, 'chat plain-llm');
    expect(chat.parentSpanId).toBe(one(spans, 'POST /v1/responses').spanId);
    const { 'gen_ai.response.time_to_first_chunk': ttfc, 'gen_ai.conversation.id': chain, ...rest } = chat.attributes;
    expect(typeof ttfc).toBe('number');
    expect(ttfc as number).toBeGreaterThan(0);
    // A Responses call's conversation is its previous_response_id chain, named by the chain's first item (this one's, on a first turn).
    expect(chain).toMatch(/^msg_[0-9a-f]{48}$/);
    expect(rest).toEqual({ ...PLAIN_CALL, 'gen_ai.request.stream': true });
    expect(childrenOf(spans, chat).map((s) => s.name)).toEqual(['attempt plain-a']);
  });

  it('a Messages call: the same span under POST /v1/messages', () => {
    expect(statuses.messages).toBe(200);
    const spans = inTrace(collector.spans, traces.messages.traceId);
    const chat = one(spans, 'chat plain-llm');
    expect(chat.parentSpanId).toBe(one(spans, 'POST /v1/messages').spanId);
    expect(chat.attributes).toEqual(PLAIN_CALL);
    expect(childrenOf(spans, chat).map((s) => s.name)).toEqual(['attempt plain-a']);
  });

  it('a call retried, then fallen back, then streamed: one span for the call, the fallback as its response model, one failed attempt span per deployment tried', () => {
    expect(statuses.story).toBe(200);
    const spans = inTrace(collector.spans, traces.story.traceId);
    const chat = one(spans, 'chat story-llm');
    expect(chat.status.code).not.toBe(STATUS_ERROR);
    expect(chat.attributes).toMatchObject({
      'gen_ai.request.model': 'story-llm',
      'gen_ai.response.model': 'backup-llm',
      'gen_ai.request.stream': true,
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 3,
    });
    const attempts = childrenOf(spans, chat);
    expect(attempts.map((s) => s.name).slice(0, 2).sort()).toEqual(['attempt story-a', 'attempt story-b']);
    expect(attempts.map((s) => s.name)[2]).toBe('attempt backup-a');
    expect(attempts).toHaveLength(3);
    for (const [index, failed] of attempts.slice(0, 2).entries()) {
      expect(failed.status.code).toBe(STATUS_ERROR);
      expect(failed.attributes).toMatchObject({ 'gen_ai.request.model': 'story-llm', 'sluice.attempt': index + 1, 'sluice.fallback': false, 'error.type': 'upstream_error' });
    }
    expect(attempts[2]!.status.code).not.toBe(STATUS_ERROR);
    expect(attempts[2]!.attributes).toMatchObject({ 'gen_ai.request.model': 'backup-llm', 'sluice.deployment': 'backup-a', 'sluice.attempt': 3, 'sluice.fallback': true });
    expect(attempts[2]!.attributes).not.toHaveProperty('error.type');
  });

  it('exported in OTLP\'s default encoding, protobuf, and decoded to the attributes above', () => {
    expect(collector.contentTypes.length).toBeGreaterThan(0);
    expect(new Set(collector.contentTypes)).toEqual(new Set(['application/x-protobuf']));
  });

  it('no key, provider key or prompt in anything exported', () => {
    const everything = collector.bodies.join('\n');
    expect(everything).toContain('chat plain-llm');
    expect(everything).not.toContain(PROVIDER_KEY);
    expect(everything).not.toContain(tenantKey);
    expect(everything).not.toContain(PROMPT);
  });
});

describe('without the opt-in', () => {
  it('tracing is as before: inference.chat spans, no attempt spans, no gen_ai attribute (here in JSON, as OTEL_EXPORTER_OTLP_TRACES_PROTOCOL asks)', async () => {
    const collector = await startOtlpCollector();
    const trace = newTrace();
    const server = await startTestServer({
      yaml: yaml(plain.baseUrl, failing.baseUrl),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', PROVIDER_KEY },
    });
    try {
      const { key } = await server.newTenant({ balanceUsd: 10 });
      const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
        key,
        headers: { traceparent: trace.traceparent },
        body: { model: 'plain-llm', messages: [{ role: 'user', content: PROMPT }] },
      });
      expect(res.status).toBe(200);
    } finally {
      await server.close();
      await collector.close();
    }
    expect(new Set(collector.contentTypes)).toEqual(new Set(['application/json']));
    const spans = inTrace(collector.spans, trace.traceId);
    const inference = one(spans, 'inference.chat');
    expect(inference.attributes).toEqual({ 'sluice.model': 'plain-llm', 'sluice.runtime': 'openai' });
    expect(spans.map((s) => s.name).sort()).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions', 'billing.credit_check', 'billing.usage_transaction', 'inference.chat']);
    expect(spans.flatMap((s) => Object.keys(s.attributes)).filter((k) => k.startsWith('gen_ai.'))).toEqual([]);
  });
});
