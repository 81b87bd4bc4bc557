/**
 * OpenTelemetry tracing: with an in-memory exporter, the span tree of real requests (server
 * span continued from the caller's traceparent; credit check, inference, upstream client
 * span with traceparent propagated, usage transaction, blob writes) and what the spans must
 * never carry; with a fake OTLP/HTTP collector on loopback, that spans are exported.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { MODEL, isTerminal, requestLines, upstreamYaml, uploadFile, waitForBatch } from '../batches/support/batch-helpers.js';
import { batchSpanContext } from '../../../src/observability/batch-tracing.js';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

function byName(spans: ReadableSpan[], name: string, kind?: SpanKind): ReadableSpan {
  const found = spans.filter((s) => s.name === name && (kind === undefined || s.kind === kind));
  expect(found, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('tracing with an in-memory exporter', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let tenant: { key: string; projectId: string; keyId: string };
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    server = await startTestServer({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
      yaml: upstreamYaml(upstream.baseUrl),
      overrides: { spanProcessors: [new SimpleSpanProcessor(exporter)] },
      startWorkers: true,
    });
    tenant = await server.newTenant();
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  it('a chat completion: server span from the caller trace, credit check, inference, upstream call with traceparent, usage', async () => {
    exporter.reset();
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
      key: tenant.key,
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: { model: MODEL, messages: [{ role: 'user', content: 'secret prompt text' }] },
    });
    expect(res.status).toBe(200);
    const spans = exporter.getFinishedSpans();

    const server_ = byName(spans, 'POST /v1/chat/completions', SpanKind.SERVER);
    expect(server_.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(server_)).toBe(CALLER_SPAN);
    expect(server_.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'sluice.model': MODEL,
      'sluice.project_id': tenant.projectId,
    });

    const credit = byName(spans, 'billing.credit_check');
    const inference = byName(spans, 'inference.chat');
    const usage = byName(spans, 'billing.usage_transaction');
    for (const child of [credit, inference, usage]) {
      expect(child.spanContext().traceId).toBe(TRACE_ID);
      expect(parentOf(child)).toBe(server_.spanContext().spanId);
    }
    expect(inference.attributes).toMatchObject({ 'sluice.model': MODEL, 'sluice.runtime': 'openai' });

    const client = byName(spans, 'POST /v1/chat/completions', SpanKind.CLIENT);
    expect(parentOf(client)).toBe(inference.spanContext().spanId);
    expect(client.attributes).toMatchObject({ 'http.response.status_code': 200, 'server.address': '127.0.0.1' });
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.traceparent).toBe(`00-${TRACE_ID}-${client.spanContext().spanId}-01`);

    const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events]));
    expect(everything).not.toContain(tenant.key);
    expect(everything).not.toContain('secret prompt text');
  });

  it('a request with no traceparent starts its own trace; an upload writes a blob span under it, a download reads one', async () => {
    exporter.reset();
    const res = await uploadFile(server.baseUrl, tenant.key, requestLines(2));
    expect(res.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const server_ = byName(spans, 'POST /v1/files');
    expect(parentOf(server_)).toBeUndefined();
    const put = byName(spans, 'blob.put');
    expect(parentOf(put)).toBe(server_.spanContext().spanId);
    expect(put.attributes).toMatchObject({ 'blob.key': `files/${res.body.id}.jsonl`, 'blob.backend': 'local', 'blob.bytes': Buffer.byteLength(requestLines(2)) });

    exporter.reset();
    const got = await call(server.baseUrl, 'GET', `/v1/files/${res.body.id}/content`, { key: tenant.key });
    expect(got.status).toBe(200);
    // The read's span lasts until its stream closes, which may be just after the response.
    await vi.waitFor(() => expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('blob.get'));
    const downloaded = exporter.getFinishedSpans();
    const get = byName(downloaded, 'blob.get');
    expect(parentOf(get)).toBe(byName(downloaded, 'GET /v1/files/:file_id/content').spanContext().spanId);
    expect(get.attributes).toMatchObject({ 'blob.key': `files/${res.body.id}.jsonl`, 'blob.backend': 'local' });
  });

  it('batch lines: one root span per line, linked to the span of the request that created the batch, with the line\'s inference as child', async () => {
    const fileId = (await uploadFile(server.baseUrl, tenant.key, requestLines(3))).body.id as string;
    exporter.reset();
    const created = await call(server.baseUrl, 'POST', '/v1/batches', {
      key: tenant.key,
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expect(created.status).toBe(200);
    const batchId = created.body.id as string;
    expect(created.body).not.toHaveProperty('trace_parent');
    const done = await waitForBatch(server.baseUrl, tenant.key, batchId, isTerminal);
    expect(done.status).toBe('completed');
    const spans = exporter.getFinishedSpans();
    const creating = byName(spans, 'POST /v1/batches', SpanKind.SERVER);
    expect(creating.spanContext().traceId).toBe(TRACE_ID);

    // Stored with the batch (what a worker on another machine reads), as a W3C traceparent.
    const row = await server.core.database.db.selectFrom('batches').select('trace_parent').where('id', '=', batchId).executeTakeFirstOrThrow();
    expect(row.trace_parent).toBe(`00-${TRACE_ID}-${creating.spanContext().spanId}-01`);

    const lines = spans.filter((s) => s.name === 'batch.line');
    expect(lines.map((s) => s.attributes['sluice.batch_line']).sort()).toEqual([1, 2, 3]);
    for (const line of lines) {
      expect(parentOf(line)).toBeUndefined();
      expect(line.spanContext().traceId).not.toBe(TRACE_ID);
      expect(line.attributes).toMatchObject({ 'sluice.batch_id': batchId, 'sluice.attempt': 1 });
      expect(line.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[TRACE_ID, creating.spanContext().spanId]]);
      const children = spans.filter((s) => parentOf(s) === line.spanContext().spanId).map((s) => s.name);
      // A line's usage is written with its result, in the result writer's shared transaction, not under the line.
      expect(children).toEqual(expect.arrayContaining(['billing.credit_check', 'inference.chat']));
    }
  }, 60_000);

  it('a batch stored without a traceparent (created outside any span: tracing off then, or an older row): its lines link to one context derived from its id', async () => {
    const fileId = (await uploadFile(server.baseUrl, tenant.key, requestLines(2))).body.id as string;
    exporter.reset();
    const principal = apiKeyPrincipal(tenant.projectId, tenant.keyId);
    const batch = await server.features.batches.services.batches.create(principal, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.traceParent).toBeNull();
    expect((await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal)).status).toBe('completed');
    const lines = exporter.getFinishedSpans().filter((s) => s.name === 'batch.line');
    expect(lines).toHaveLength(2);
    const derived = batchSpanContext({ id: batch.id, traceParent: null });
    expect(derived.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(batchSpanContext({ id: 'batch_another', traceParent: null }).traceId).not.toBe(derived.traceId);
    for (const line of lines) expect(line.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[derived.traceId, derived.spanId]]);
    // A stored value that is not a valid traceparent falls back the same way.
    expect(batchSpanContext({ id: batch.id, traceParent: '00-00000000000000000000000000000000-0000000000000000-01' })).toEqual(derived);
  }, 60_000);

  it('errors: a refused key (403 invalid_api_key) is a span with its status and no project; the key is not in it', async () => {
    exporter.reset();
    const res = await call(server.baseUrl, 'GET', '/v1/models', { key: 'sk-not-a-real-key-0000' });
    expect(res.status).toBe(403);
    const span = byName(exporter.getFinishedSpans(), 'GET /v1/models');
    expect(span.attributes['http.response.status_code']).toBe(403);
    expect(span.attributes['sluice.project_id']).toBeUndefined();
    expect(JSON.stringify(span.attributes)).not.toContain('sk-not-a-real-key');
  });
});

describe('tracing to an OTLP/HTTP collector', () => {
  it('exports the spans of a request, with the service name, when the server shuts down (in JSON, as OTEL_EXPORTER_OTLP_PROTOCOL asks)', async () => {
    const received: any[] = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url, contentType: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString()) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    const server = await startTestServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'sluice-test' } });
    try {
      expect((await call(server.baseUrl, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await server.close();
      collector.close();
    }
    expect(received.length).toBeGreaterThan(0);
    expect(received[0]).toMatchObject({ path: '/v1/traces', contentType: 'application/json' });
    const resourceSpans = received.flatMap((r) => r.body.resourceSpans);
    const service = resourceSpans[0].resource.attributes.find((a: any) => a.key === 'service.name');
    expect(service.value.stringValue).toBe('sluice-test');
    const names = resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans.map((span: any) => span.name)));
    expect(names).toContain('GET /healthz');
  });
});

describe('tracing off', () => {
  it('no OTEL_* variables: tracing is off and no span reaches a registered exporter', async () => {
    const exporter = new InMemorySpanExporter();
    const server = await startTestServer({ overrides: { spanProcessors: [new SimpleSpanProcessor(exporter)] } });
    try {
      expect(server.core.config.tracing.enabled).toBe(false);
      expect((await call(server.baseUrl, 'GET', '/healthz')).status).toBe(200);
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
