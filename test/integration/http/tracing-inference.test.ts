/**
 * OpenTelemetry spans of the in-process runtimes, with an in-memory exporter, on the
 * project's random-weight ONNX and GGUF models: each inference call is an
 * `inference.<capability>` span, a child of its HTTP request's server span, carrying the
 * model id and runtime and never the caller's key or text; and the traced backends still
 * serve every method the routes use besides the traced ones (token counts, status, close).
 */
import { rmSync } from 'node:fs';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';
import { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const SECRET_TEXT = 'my confidential sentence';

let server: TestServer;
let modelsDir: string;
let key: string;
const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2', 'deberta-v3-small', 'LFM2.5-1.2B-Instruct']);
  server = await startTestServer({
    env: { MODELS_DIR: modelsDir, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...GGUF_RUNTIME_ENV },
    overrides: { spanProcessors: [new SimpleSpanProcessor(exporter)] },
  });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

function only(spans: ReadableSpan[], name: string, kind?: SpanKind): ReadableSpan {
  const found = spans.filter((s) => s.name === name && (kind === undefined || s.kind === kind));
  expect(found, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

/** The request's server span and its one inference span, which must be the server span's child in the caller's trace. */
function inferenceUnder(route: string, capability: string): { server: ReadableSpan; inference: ReadableSpan } {
  const spans = exporter.getFinishedSpans();
  const server_ = only(spans, `POST ${route}`, SpanKind.SERVER);
  expect(server_.spanContext().traceId).toBe(TRACE_ID);
  expect(server_.parentSpanContext?.spanId).toBe(CALLER_SPAN);
  const inference = only(spans, `inference.${capability}`);
  expect(inference.spanContext().traceId).toBe(TRACE_ID);
  expect(inference.parentSpanContext?.spanId).toBe(server_.spanContext().spanId);
  const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status]));
  expect(everything).not.toContain(key);
  expect(everything).not.toContain(SECRET_TEXT);
  return { server: server_, inference };
}

const traced = (route: string, body: Record<string, unknown>) =>
  call(server.baseUrl, 'POST', route, { key, headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` }, body });

describe('ONNX inference spans', () => {
  it('an embedding request: inference.embed under the request span, with the model id and the onnx runtime', async () => {
    exporter.reset();
    const res = await traced('/v1/embeddings', { model: 'all-minilm-l6-v2', input: [SECRET_TEXT, 'another one'] });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    const { server: server_, inference } = inferenceUnder('/v1/embeddings', 'embed');
    expect(inference.attributes).toEqual({ 'sluice.model': 'all-minilm-l6-v2', 'sluice.runtime': 'onnx' });
    expect(server_.attributes).toMatchObject({ 'http.response.status_code': 200 });
  });

  it('zero-shot classification on chat completions: inference.runTask under the request span', async () => {
    exporter.reset();
    const res = await traced('/v1/chat/completions', {
      model: 'deberta-v3-small',
      messages: [
        { role: 'system', content: 'sports, politics' },
        { role: 'user', content: SECRET_TEXT },
      ],
    });
    expect(res.status).toBe(200);
    const { inference } = inferenceUnder('/v1/chat/completions', 'runTask');
    expect(inference.attributes).toEqual({ 'sluice.model': 'deberta-v3-small', 'sluice.runtime': 'onnx' });
  });
});

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF inference spans', () => {
  it('a chat completion: inference.chat under the request span, with the model id and the gguf runtime', async () => {
    exporter.reset();
    const res = await traced('/v1/chat/completions', { model: 'LFM2.5-1.2B-Instruct', messages: [{ role: 'user', content: SECRET_TEXT }], temperature: 0 });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe(' hello world');
    const { inference } = inferenceUnder('/v1/chat/completions', 'chat');
    expect(inference.attributes).toEqual({ 'sluice.model': 'LFM2.5-1.2B-Instruct', 'sluice.runtime': 'gguf' });
  });

  it('a streamed chat completion: inference.chatStream under the request span, ended with the stream', async () => {
    exporter.reset();
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ model: 'LFM2.5-1.2B-Instruct', messages: [{ role: 'user', content: SECRET_TEXT }], temperature: 0, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('data: [DONE]');
    const { inference } = inferenceUnder('/v1/chat/completions', 'chatStream');
    expect(inference.attributes).toEqual({ 'sluice.model': 'LFM2.5-1.2B-Instruct', 'sluice.runtime': 'gguf' });
  });
});

describe('the traced backends keep their untraced methods', () => {
  // The decorator wraps the inference calls; the rest (token counts, batching statistics, the
  // decision route's NLI pairs, close) must reach the real backend with its private state.
  it('count tokens with the model\'s own tokenizer (exact), on onnx and gguf', async () => {
    const { registry } = server.core;
    for (const id of ['all-minilm-l6-v2', ...(GGUF_RUNTIMES_DIR ? ['LFM2.5-1.2B-Instruct'] : [])]) {
      const counted = await registry.countTokens(registry.find(id)!, 'hello world');
      expect(counted, id).toMatchObject({ exact: true });
    }
  });

  it('the onnx backend is still an OnnxBackend whose own methods run (batch statistics, NLI pairs)', async () => {
    const { registry } = server.core;
    const nli = registry.find('deberta-v3-small')!;
    const backend = await registry.backendFor(nli, 'runTask');
    expect(backend).toBeInstanceOf(OnnxBackend);
    const onnx = backend as OnnxBackend;
    const pairs = await onnx.nliPairs(nli, 'a premise', ['one hypothesis', 'another']);
    expect(pairs).toHaveLength(2);
    expect(onnx.batchStats('all-minilm-l6-v2')).toMatchObject({ items: expect.any(Number) });
  });
});
