/**
 * GET /v1/openapi.json against the routes Fastify actually mounted (read from its route
 * table, not from a list kept here): every route but the hidden operations routes is
 * documented with its request (body, path parameters, pagination query) and a response
 * schema for its success status.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';

interface MountedRoute {
  method: string;
  /** In OpenAPI's form: `/v1/files/{file_id}`. */
  path: string;
}

/**
 * Reads `printRoutes({ commonPrefix: false })`: a tree, four characters of indent a level,
 * each node a path segment appended to its parent's, with its methods in parentheses.
 */
function mountedRoutes(app: FastifyInstance): MountedRoute[] {
  const routes: MountedRoute[] = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^(.*?)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = [...match[1]!].length / 4;
    const path = (prefixes[depth - 1] ?? '') + match[2]!;
    prefixes.length = depth;
    prefixes[depth] = path;
    for (const method of match[3]?.split(', ') ?? []) {
      // HEAD is Fastify's automatic twin of each GET.
      if (method !== 'HEAD') routes.push({ method, path: path.replace(/:(\w+)/g, '{$1}') });
    }
  }
  return routes;
}

/**
 * Hidden on purpose (ops.test.ts checks they stay out): operations routes, the document
 * itself, CORS preflights, the browser's redirect to the console, the MCP endpoint's
 * 2025 session operations (answered 405: the endpoint is stateless), and the Responses
 * WebSocket's upgrade (OpenAPI has no WebSockets; docs/responses.md documents it).
 */
const HIDDEN = new Set(['GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /v1/openapi.json', 'OPTIONS *', 'GET /', 'GET /mcp', 'DELETE /mcp', 'GET /v1/responses']);
/** The console's own routes and its mounts of the /v1 and admin route modules (documented once, there). */
const isHidden = (route: MountedRoute) =>
  HIDDEN.has(`${route.method} ${route.path}`) ||
  route.path.startsWith('/console') ||
  // A scope with its own CORS routes its preflights into itself (plugins/cors.ts).
  (route.method === 'OPTIONS' && route.path.endsWith('/*'));
/** Actions named by their path alone. */
const BODYLESS_POSTS = new Set(['POST /admin/v1/keys/{id}/revoke', 'POST /admin/v1/outbox/{id}/replay', 'POST /v1/batches/{batch_id}/cancel', 'POST /v1/responses/{response_id}/cancel']);

type Operation = {
  requestBody?: { content: Record<string, { schema?: Record<string, unknown> }> };
  parameters?: Array<{ in: string; name: string; schema?: unknown }>;
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
};

const schemasOf = (content: Record<string, { schema?: Record<string, unknown> }> | undefined) =>
  Object.values(content ?? {}).map((media) => media.schema);

describe('GET /v1/openapi.json', () => {
  let server: TestServer;
  let routes: MountedRoute[];
  let paths: Record<string, Record<string, Operation>>;

  beforeAll(async () => {
    server = await startTestServer();
    routes = mountedRoutes(server.app);
    paths = (await call(server.baseUrl, 'GET', '/v1/openapi.json')).body.paths;
  });
  afterAll(async () => server.close());

  const operationOf = (route: MountedRoute): Operation | undefined => paths[route.path]?.[route.method.toLowerCase()];
  const documented = () => routes.filter((r) => !isHidden(r));

  it('reads the route table: the hidden routes and every API route are mounted', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    expect(names).toEqual(expect.arrayContaining([...HIDDEN, ...BODYLESS_POSTS, 'POST /v1/chat/completions', 'GET /v1/files/{file_id}/content']));
    expect(documented().length).toBeGreaterThanOrEqual(24);
  });

  it('documents every mounted route but the hidden ones, and nothing else', () => {
    for (const route of routes) {
      const hidden = isHidden(route);
      expect(operationOf(route) === undefined, `${route.method} ${route.path}`).toBe(hidden);
    }
    const operations = Object.values(paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(operations).toBe(documented().length);
  });

  it('gives every documented route a schema for its success response', () => {
    for (const route of documented()) {
      const success = operationOf(route)!.responses['200'];
      const schemas = schemasOf(success?.content);
      expect(schemas.length, `${route.method} ${route.path}`).toBeGreaterThan(0);
      // Inline, or a named component (openapi-client.test.ts checks each $ref resolves).
      for (const schema of schemas) expect(schema?.type ?? schema?.anyOf ?? schema?.$ref, `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it('gives every POST that takes a body a request body schema with its fields', () => {
    for (const route of documented().filter((r) => r.method === 'POST')) {
      const name = `${route.method} ${route.path}`;
      const body = operationOf(route)!.requestBody;
      if (BODYLESS_POSTS.has(name)) {
        expect(body, name).toBeUndefined();
        continue;
      }
      const schemas = schemasOf(body?.content);
      expect(schemas.length, name).toBeGreaterThan(0);
      for (const schema of schemas) expect(Object.keys((schema?.properties as object) ?? {}).length, name).toBeGreaterThan(0);
    }
  });

  it('lists /mcp as one JSON-RPC POST naming every tool', () => {
    const mcp = paths['/mcp']!;
    expect(Object.keys(mcp)).toEqual(['post']);
    const [request] = schemasOf(mcp.post!.requestBody?.content) as Array<{ properties: Record<string, any> }>;
    expect(Object.keys(request!.properties)).toEqual(['jsonrpc', 'id', 'method', 'params']);
    expect(request!.properties.jsonrpc).toEqual({ type: 'string', enum: ['2.0'] });
    const tools = request!.properties.params.properties.name.description as string;
    for (const tool of ['chat', 'embed', 'moderate', 'classify', 'extract', 'transcribe', 'decide', 'batch_create', 'batch_get']) expect(tools).toContain(tool);
    const [answer] = schemasOf(mcp.post!.responses['200']?.content) as Array<{ properties: Record<string, unknown> }>;
    expect(Object.keys(answer!.properties)).toEqual(['jsonrpc', 'id', 'result', 'error']);
  });

  it('documents each path parameter, and the pagination query of each list', () => {
    for (const route of documented()) {
      const name = `${route.method} ${route.path}`;
      const operation = operationOf(route)!;
      const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const documentedPath = (operation.parameters ?? []).filter((p) => p.in === 'path' && p.schema).map((p) => p.name);
      expect(documentedPath.sort(), name).toEqual(inPath.sort());
      const success = schemasOf(operation.responses['200']?.content)[0] as { properties?: Record<string, unknown> };
      if (success.properties?.has_more) {
        const query = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
        expect(query, name).toEqual(expect.arrayContaining(['limit', 'after']));
      }
    }
  });

  it('describes the multipart routes as forms with a binary file', () => {
    for (const path of ['/v1/files', '/v1/audio/transcriptions', '/v1/audio/translations']) {
      const form = paths[path]!.post!.requestBody!.content['multipart/form-data']?.schema as { properties: Record<string, { format?: string }> };
      expect(form.properties.file!.format, path).toBe('binary');
    }
  });

  it('describes the open wire: every chat field Sluice reads or carries, and POST /v1/completions', () => {
    const bodyOf = (path: string) => schemasOf(paths[path]!.post!.requestBody!.content)[0] as { properties: Record<string, unknown> };
    const chat = bodyOf('/v1/chat/completions');
    for (const field of [
      'tools', 'tool_choice', 'parallel_tool_calls', 'n', 'logprobs', 'top_logprobs', 'logit_bias', 'seed', 'stop', 'user',
      'response_format', 'reasoning_effort', 'prediction', 'service_tier',
    ]) {
      expect(chat.properties, field).toHaveProperty(field);
    }
    expect(JSON.stringify(chat.properties.messages)).toContain('image_url');
    const completions = bodyOf('/v1/completions');
    expect(Object.keys(completions.properties)).toEqual(expect.arrayContaining(['model', 'prompt', 'suffix', 'echo', 'logprobs', 'max_tokens', 'n', 'stream', 'stream_options']));
    expect(schemasOf(paths['/v1/completions']!.post!.responses['200']!.content).length).toBeGreaterThan(0);
  });

  it('leaves the schemas\' error wording out of the document', async () => {
    const text = JSON.stringify((await call(server.baseUrl, 'GET', '/v1/openapi.json')).body);
    expect(text).not.toContain('x-error');
    expect(JSON.stringify(paths['/v1/chat/completions']!.post!.requestBody)).toContain('"minItems":1');
  });
});
