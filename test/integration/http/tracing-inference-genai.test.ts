/**
 * The in-process runtimes' spans in OpenTelemetry's GenAI conventions
 * (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental), with an in-memory exporter, on
 * the project's random-weight ONNX and GGUF models: an embedding and a streamed chat are
 * INTERNAL `{operation} {model}` spans with the runtime as provider; a capability outside
 * the conventions keeps its `inference.<capability>` span. Its own file: the tracer
 * provider is process-wide, so one traced server at a time.
 */
import { rmSync } from 'node:fs';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';

const SECRET_TEXT = 'my confidential sentence';

let modelsDir: string;

function only(spans: ReadableSpan[], name: string, kind?: SpanKind): ReadableSpan {
  const found = spans.filter((s) => s.name === name && (kind === undefined || s.kind === kind));
  expect(found, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

describe('in the GenAI conventions (OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental)', () => {
  let genAiServer: TestServer;
  let genAiKey: string;
  const genAiExporter = new InMemorySpanExporter();

  beforeAll(async () => {
    modelsDir = buildTestModels(['all-minilm-l6-v2', 'deberta-v3-small', 'LFM2.5-1.2B-Instruct']);
    genAiServer = await startTestServer({
      env: { MODELS_DIR: modelsDir, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental', ...GGUF_RUNTIME_ENV },
      overrides: { spanProcessors: [new SimpleSpanProcessor(genAiExporter)] },
    });
    ({ key: genAiKey } = await genAiServer.newTenant({ balanceUsd: 5 }));
  });
  afterAll(async () => {
    await genAiServer?.close();
    if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
  });

  const post = (route: string, body: Record<string, unknown>) => call(genAiServer.baseUrl, 'POST', route, { key: genAiKey, body });

  it('an in-process embedding: one INTERNAL "embeddings <model>" span with the runtime as provider and the tokens, no attempt span', async () => {
    genAiExporter.reset();
    const res = await post('/v1/embeddings', { model: 'all-minilm-l6-v2', input: [SECRET_TEXT] });
    expect(res.status).toBe(200);
    const spans = genAiExporter.getFinishedSpans();
    const span = only(spans, 'embeddings all-minilm-l6-v2', SpanKind.INTERNAL);
    expect(span.parentSpanContext?.spanId).toBe(only(spans, 'POST /v1/embeddings', SpanKind.SERVER).spanContext().spanId);
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.provider.name': 'onnx',
      'gen_ai.request.model': 'all-minilm-l6-v2',
      'gen_ai.response.model': 'all-minilm-l6-v2',
      'gen_ai.usage.input_tokens': res.body.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': 0,
    });
    expect(spans.filter((s) => s.name.startsWith('attempt ') || s.name.startsWith('inference.'))).toEqual([]);
  });

  it('a capability outside the conventions keeps its inference span (zero-shot classification: inference.runTask)', async () => {
    genAiExporter.reset();
    const res = await post('/v1/chat/completions', {
      model: 'deberta-v3-small',
      messages: [
        { role: 'system', content: 'sports, politics' },
        { role: 'user', content: SECRET_TEXT },
      ],
    });
    expect(res.status).toBe(200);
    expect(only(genAiExporter.getFinishedSpans(), 'inference.runTask').attributes).toEqual({ 'sluice.model': 'deberta-v3-small', 'sluice.runtime': 'onnx' });
  });

  it.skipIf(!GGUF_RUNTIMES_DIR)('an in-process streamed chat: "chat <model>", INTERNAL, with the gguf runtime as provider and the time to its first chunk', async () => {
    genAiExporter.reset();
    const res = await post('/v1/chat/completions', { model: 'LFM2.5-1.2B-Instruct', messages: [{ role: 'user', content: SECRET_TEXT }], temperature: 0, stream: true });
    expect(res.status).toBe(200);
    const span = only(genAiExporter.getFinishedSpans(), 'chat LFM2.5-1.2B-Instruct', SpanKind.INTERNAL);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'gguf',
      'gen_ai.request.stream': true,
      'gen_ai.response.model': 'LFM2.5-1.2B-Instruct',
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(span.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(JSON.stringify(span.attributes)).not.toContain(SECRET_TEXT);
  });
});
