/**
 * Bodies in GenAI spans (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental), as a fake
 * OTLP collector on loopback receives them (protobuf, the default): a call's input and output
 * go into its `gen_ai.client.inference.operation.details` span event only when its project
 * logs bodies. `off`: no event and the prompt nowhere in anything exported; `redacted`: the
 * messages with an API key put in a message and the caller's own key taken out, as the
 * request log does; `full`: the messages as sent. Three projects on one server, one setting
 * each; each call has its own traceparent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startOtlpCollector, type CollectedSpan, type OtlpCollector } from '../../helpers/otlp-collector.js';
import { setBodies } from '../request-log/setup.js';

const EVENT = 'gen_ai.client.inference.operation.details';
const PROVIDER_KEY = 'sk-provider-secret-0123456789abcdef';
/** An OpenAI-shaped key a user pastes into a message. */
const PASTED_KEY = 'sk-proj-AbCdEfGh0123456789IjKlMnOp';
const OFF_PROMPT = 'an off project prompt that no span may carry';
const ANSWER = [{ role: 'assistant', parts: [{ type: 'text', content: 'Hello there' }], finish_reason: 'stop' }];

const YAML = (baseUrl: string) => `models:
  plain-llm:
    kind: chat
    deployments:
      - { id: plain-a, base_url: ${baseUrl}, upstream_model: plain-llm, api_key_env: PROVIDER_KEY }
`;

let traceNo = 0;
function newTrace(): { traceId: string; traceparent: string } {
  const traceId = (++traceNo).toString(16).padStart(32, 'b');
  return { traceId, traceparent: `00-${traceId}-00f067aa0ba902b7-01` };
}

function chatSpan(collector: OtlpCollector, traceId: string): CollectedSpan {
  const found = collector.spans.filter((s) => s.traceId === traceId && s.name === 'chat plain-llm');
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** The span's content event, its messages parsed. */
function contentOf(span: CollectedSpan): { input: unknown; output: unknown } {
  const events = span.events.filter((e) => e.name === EVENT);
  expect(events).toHaveLength(1);
  const { 'gen_ai.input.messages': input, 'gen_ai.output.messages': output, ...rest } = events[0]!.attributes;
  expect(rest).toEqual({});
  return { input: JSON.parse(input as string), output: JSON.parse(output as string) };
}

let upstream: FakeUpstream;
let collector: OtlpCollector;
const traces = { off: newTrace(), redacted: newTrace(), redactedStream: newTrace(), full: newTrace() };
const statuses: Record<string, number> = {};
const keys: Record<string, string> = {};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.chat({ content: 'Hello there', usage: { prompt_tokens: 7, completion_tokens: 2 } });
  collector = await startOtlpCollector();
  const server = await startTestServer({
    yaml: YAML(upstream.baseUrl),
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental', PROVIDER_KEY },
  });
  try {
    const tenants = { off: await server.newTenant({ balanceUsd: 5 }), redacted: await server.newTenant({ balanceUsd: 5 }), full: await server.newTenant({ balanceUsd: 5 }) };
    await setBodies(server, tenants.redacted.projectId, 'redacted');
    await setBodies(server, tenants.full.projectId, 'full');
    for (const [name, tenant] of Object.entries(tenants)) keys[name] = tenant.key;
    const post = (tenant: keyof typeof tenants, trace: { traceparent: string }, body: Record<string, unknown>) =>
      call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenants[tenant].key, headers: { traceparent: trace.traceparent }, body: { model: 'plain-llm', ...body } });
    const secretMessages = (tenant: keyof typeof tenants) => [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: `my key is ${PASTED_KEY} and yours is ${tenants[tenant].key}` },
    ];
    statuses.off = (await post('off', traces.off, { messages: [{ role: 'user', content: OFF_PROMPT }] })).status;
    statuses.redacted = (await post('redacted', traces.redacted, { messages: secretMessages('redacted') })).status;
    statuses.redactedStream = (await post('redacted', traces.redactedStream, { messages: secretMessages('redacted'), stream: true })).status;
    statuses.full = (await post('full', traces.full, { messages: secretMessages('full') })).status;
  } finally {
    // Shutting down flushes the batched spans to the collector.
    await server.close();
  }
}, 60_000);
afterAll(async () => {
  await Promise.all([upstream?.close(), collector?.close()]);
});

describe('bodies in GenAI span events, per project', () => {
  it('off: no content event, and the prompt nowhere in anything exported', () => {
    expect(statuses.off).toBe(200);
    const span = chatSpan(collector, traces.off.traceId);
    expect(span.events).toEqual([]);
    expect(collector.contentTypes.length).toBeGreaterThan(0);
    expect(collector.bodies.join('\n')).not.toContain(OFF_PROMPT);
  });

  it('redacted: the input and output messages in the conventions\' schema, the pasted key and the caller\'s own key taken out', () => {
    expect(statuses.redacted).toBe(200);
    expect(contentOf(chatSpan(collector, traces.redacted.traceId))).toEqual({
      input: [
        { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
        { role: 'user', parts: [{ type: 'text', content: 'my key is [redacted] and yours is [redacted]' }] },
      ],
      output: ANSWER,
    });
  });

  it('redacted, streamed: the answer put together from its chunks', () => {
    expect(statuses.redactedStream).toBe(200);
    const { input, output } = contentOf(chatSpan(collector, traces.redactedStream.traceId));
    expect(JSON.stringify(input)).toContain('my key is [redacted] and yours is [redacted]');
    expect(output).toEqual(ANSWER);
  });

  it('full: the messages as sent, the pasted key included', () => {
    expect(statuses.full).toBe(200);
    expect(contentOf(chatSpan(collector, traces.full.traceId))).toEqual({
      input: [
        { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
        { role: 'user', parts: [{ type: 'text', content: `my key is ${PASTED_KEY} and yours is ${keys.full}` }] },
      ],
      output: ANSWER,
    });
  });

  it('the redacted project\'s keys and the provider key are in nothing exported', () => {
    const everything = collector.bodies.join('\n');
    expect(everything).toContain(PASTED_KEY);
    expect(everything).not.toContain(keys.redacted);
    expect(everything).not.toContain(keys.off);
    expect(everything).not.toContain(PROVIDER_KEY);
  });
});
