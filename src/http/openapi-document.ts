/**
 * What @fastify/swagger needs to make the document generator-friendly: per route (the
 * `transform` hook, which sees the route's scope), every error status it answers with the
 * shared envelope, and `text/event-stream` beside JSON for a route that streams; for the
 * whole document (`transformObject`), the named components, with each inline copy of one
 * replaced by a `$ref`. Documentation only: the routes' own schemas, which serialize
 * their answers, are never changed.
 */
import type { FastifySchema, RouteOptions } from 'fastify';
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import type { TSchema } from '@sinclair/typebox';
import type { ErrorKind } from '../domain/shared/errors.js';
import { statusOfKind, type StatusOverrides } from './errors.js';
import { describeKinds, ErrorEnvelope, KINDS_BY_TAG, NAMED_COMPONENTS } from './schemas/openapi-components.js';
import { withoutWording } from '../wire/wording.js';

/** A route schema key naming the event a streamed answer sends (text/event-stream). */
export const STREAM_EVENT = 'x-stream-event';
/** A route schema key saying, in words, how that stream is written. */
export const STREAM_DESCRIPTION = 'x-stream-description';
/** A route schema key listing error kinds the route answers beyond those its scope, body and parameters bring. */
export const ERROR_KINDS = 'x-error-kinds';

/** The route schema keys that document a route's own error kinds: `...answersErrors('conflict')`. */
export const answersErrors = (...kinds: ErrorKind[]) => ({ [ERROR_KINDS]: kinds });

type Schema = Record<string, unknown> & { response?: Record<string, unknown>; tags?: string[] };

function errorKinds(schema: Schema, route: RouteOptions): ErrorKind[] {
  const kinds = new Set<ErrorKind>(['internal']);
  // A route of an authenticating scope (api-scope.ts stamps its policy and security on it).
  if (route.config?.scope && schema.security) ['authentication', 'permission', 'rate_limit'].forEach((k) => kinds.add(k as ErrorKind));
  if (schema.body || schema.querystring || schema.params) kinds.add('invalid_request');
  if (schema.body) kinds.add('payload_too_large');
  if (schema.params) kinds.add('not_found');
  for (const tag of schema.tags ?? []) for (const kind of KINDS_BY_TAG.get(tag) ?? []) kinds.add(kind);
  for (const kind of (schema[ERROR_KINDS] as ErrorKind[] | undefined) ?? []) kinds.add(kind);
  return [...kinds];
}

/** Status → the kinds answering it, through the scope's (and the route's) overrides. */
function statusesOf(kinds: readonly ErrorKind[], route: RouteOptions): Map<number, ErrorKind[]> {
  const config = route.config as { scope?: { statusOverrides?: StatusOverrides }; statusOverrides?: StatusOverrides } | undefined;
  const overrides: StatusOverrides = { ...config?.statusOverrides, ...config?.scope?.statusOverrides };
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of kinds) {
    const status = overrides[kind] ?? statusOfKind(kind);
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  return byStatus;
}

const json = (schema: unknown) => ({ 'application/json': { schema } });

function transformRoute({ schema, url, route }: { schema: Schema; url: string; route: RouteOptions }) {
  if (!schema || schema.hide) return { schema, url };
  const { [STREAM_EVENT]: streamEvent, [STREAM_DESCRIPTION]: streamDescription, [ERROR_KINDS]: _kinds, ...rest } = schema;
  const response: Record<string, unknown> = { ...rest.response };
  if (streamEvent && response['200']) {
    const event = withoutWording(JSON.parse(JSON.stringify(streamEvent)) as Record<string, unknown>);
    const sse = { type: 'string', description: streamDescription, 'x-event': event };
    response['200'] = { description: 'the answer as JSON, or with `stream: true` as server-sent events', content: { ...json(response['200']), 'text/event-stream': { schema: sse } } };
  }
  // The route's wire's envelope (Anthropic's on the Messages routes), else OpenAI's.
  const envelope = (route.config as { wireErrors?: { schema?: unknown } } | undefined)?.wireErrors?.schema ?? ErrorEnvelope;
  for (const [status, kinds] of statusesOf(errorKinds(schema, route), route)) {
    if (response[status] === undefined) response[status] = { description: describeKinds(kinds), content: json(envelope) };
  }
  return { schema: { ...rest, response }, url };
}

/**
 * A schema as @fastify/swagger writes it, for comparing copies: `const: x` becomes
 * `enum: [x]`, and a record's `patternProperties: {"^(.*)$": s}` becomes `additionalProperties: s`.
 */
function normalized(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalized);
  if (typeof node !== 'object' || node === null) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const patterns = key === 'patternProperties' ? Object.entries(value as Record<string, unknown>) : [];
    if (key === 'const') copy.enum = [value];
    else if (patterns.length === 1 && patterns[0]![0] === '^(.*)$') copy.additionalProperties = normalized(patterns[0]![1]);
    else copy[key] = normalized(value);
  }
  return copy;
}

/** Key order does not matter: sorted keys, so two copies of one schema compare equal. */
const canonical = (node: unknown): string =>
  JSON.stringify(node, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );

/** Replaces every inline copy of a named component under `node` by its `$ref` (the node itself excepted when `keepRoot`). */
function refComponents(node: unknown, named: Map<string, string>, keepRoot = false): unknown {
  if (typeof node !== 'object' || node === null) return node;
  if (!keepRoot) {
    const name = named.get(canonical(node));
    if (name) return { $ref: `#/components/schemas/${name}` };
  }
  if (Array.isArray(node)) return node.map((n) => refComponents(n, named));
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) copy[key] = refComponents(value, named);
  return copy;
}

function transformDocument(documentObject: { openapiObject?: unknown; swaggerObject?: unknown }) {
  const document = withoutWording(('openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject) as Record<string, unknown>);
  const schemas: Record<string, unknown> = {};
  const named = new Map<string, string>();
  for (const [name, schema] of NAMED_COMPONENTS) {
    const plain = normalized(withoutWording(JSON.parse(JSON.stringify(schema as TSchema)) as unknown));
    schemas[name] = plain;
    named.set(canonical(plain), name);
  }
  for (const [name, schema] of Object.entries(schemas)) schemas[name] = refComponents(schema, named, true);
  const components = { ...(document.components as Record<string, unknown>), schemas };
  return { ...document, paths: refComponents(document.paths, named), components };
}

/** The `transform` and `transformObject` options of @fastify/swagger. */
export const openApiTransforms: { transform: SwaggerTransform; transformObject: SwaggerTransformObject } = {
  transform: ({ schema, url, route }) => transformRoute({ schema: schema as Schema, url, route }) as { schema: FastifySchema; url: string },
  transformObject: (document) => transformDocument(document) as ReturnType<SwaggerTransformObject>,
};
