/**
 * A fake OTLP/HTTP trace collector on loopback that keeps every span it receives, in
 * either encoding the exporter may send: `application/x-protobuf` (decoded with
 * protobufjs from the subset of opentelemetry-proto's trace messages below) or
 * `application/json`. Both come out in the same shape: ids in hex, attributes (the span's
 * and its events') flattened to plain values, and the content type of each export.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** opentelemetry-proto's collector/trace/v1 request, trimmed to what the tests read (field numbers as upstream). */
const SCHEMA = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
  repeated Event events = 11; Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

let requestType: protobuf.Type | null = null;
const ExportRequest = (): protobuf.Type => (requestType ??= protobuf.parse(SCHEMA).root.lookupType('otlp.ExportTraceServiceRequest'));

export interface CollectedEvent {
  name: string;
  attributes: Record<string, unknown>;
}

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  attributes: Record<string, unknown>;
  events: CollectedEvent[];
  status: { code?: number };
}

type RawValue = Record<string, any>;
type RawAttribute = { key: string; value: RawValue };
type RawSpan = Record<string, any>;

function valueOf(value: RawValue): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('arrayValue' in value) return ((value.arrayValue.values ?? []) as RawValue[]).map(valueOf);
  throw new Error(`unexpected attribute value ${JSON.stringify(value)}`);
}

export function flatten(attributes: RawAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** A decoded protobuf id (bytes) or a JSON one (hex already) as hex; an empty one is none. */
const hexOf = (id: unknown): string | undefined => {
  const hex = typeof id === 'string' ? id : id instanceof Uint8Array ? Buffer.from(id).toString('hex') : '';
  return hex === '' ? undefined : hex;
};

function spanOf(raw: RawSpan): CollectedSpan {
  const span: CollectedSpan = {
    traceId: hexOf(raw.traceId)!,
    spanId: hexOf(raw.spanId)!,
    name: raw.name,
    kind: raw.kind ?? 0,
    startTimeUnixNano: raw.startTimeUnixNano,
    attributes: flatten(raw.attributes),
    events: ((raw.events ?? []) as RawSpan[]).map((e) => ({ name: e.name, attributes: flatten(e.attributes) })),
    status: raw.status ?? {},
  };
  const parent = hexOf(raw.parentSpanId);
  if (parent !== undefined) span.parentSpanId = parent;
  return span;
}

/** The export's spans, as JSON or protobuf says. */
function decode(body: Buffer, contentType: string): RawSpan[] {
  const request = contentType.startsWith('application/x-protobuf')
    ? ExportRequest().toObject(ExportRequest().decode(body), { longs: String })
    : JSON.parse(body.toString());
  const spans: RawSpan[] = [];
  for (const resource of request.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
  return spans;
}

export interface OtlpCollector {
  url: string;
  spans: CollectedSpan[];
  /** Each export's body as received (protobuf keeps strings as UTF-8, so text searches still see them). */
  bodies: string[];
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      bodies.push(body.toString());
      contentTypes.push(contentType);
      for (const raw of decode(body, contentType)) spans.push(spanOf(raw));
      if (contentType.startsWith('application/x-protobuf')) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, spans, bodies, contentTypes, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
