/**
 * The seam's second pass, at the scope: every route module mounted under a strategy that
 * verifies the exact body bytes answers as it does on /v1 (so no module changes the scope
 * it is mounted in, and each parses the bytes that were verified), a body that fails
 * verification is refused before anything parses it, and a scope's policy (rate limit,
 * CORS, OpenAPI security, error body, answer fields, settlement trailers) is its own.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Assembly } from '../../../src/composition/features.js';
import { apiKeyPrincipal, type Caller } from '../../../src/domain/identity/caller.js';
import type { Admission, Meter, MeteredCall } from '../../../src/domain/billing/meter.js';
import { AppError } from '../../../src/domain/shared/errors.js';
import { apiScope } from '../../../src/http/scopes/api-scope.js';
import type { AuthStrategy } from '../../../src/http/auth/strategy.js';
import { createRateLimiter } from '../../../src/storage/rate-limit/rate-limiter.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { inferenceYaml } from '../inference/setup.js';

const SECRET = 'scope-seam-secret';
const sign = (bytes: string | Buffer) => createHmac('sha256', SECRET).update(bytes).digest('hex');

/** Admits a request whose HMAC over its exact body bytes is in `x-toy-signature`, as the project in `x-toy-project`. */
class SignedProjectStrategy implements AuthStrategy {
  readonly needs = 'raw-body';
  readonly verified: Buffer[] = [];
  constructor(private readonly meter: () => Meter) {}
  authenticate(request: FastifyRequest): Caller {
    const bytes = request.rawBody ?? Buffer.alloc(0);
    const given = Buffer.from(String(request.headers['x-toy-signature'] ?? ''));
    const expected = Buffer.from(sign(bytes));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('authentication', 'bad signature', { code: 'invalid_signature', challenge: { body: { error: 'invalid_toy_signature' } } });
    }
    this.verified.push(bytes);
    return { principal: apiKeyPrincipal(String(request.headers['x-toy-project']), null), meter: this.meter() };
  }
}

/** Charges nothing, and says so in a settlement header. */
class HeaderMeter implements Meter {
  admit(_principal: unknown, call: MeteredCall): Admission {
    return {
      headers: { 'x-toy-admitted': call.model },
      settle: async (usage) => ({ record: null, headers: { 'x-toy-usage': `input_tokens=${usage.inputTokens}, output_tokens=${usage.outputTokens}` } }),
      release: () => {},
    };
  }
}

let upstream: FakeUpstream;
let server: TestServer;
let signed: SignedProjectStrategy;

function mountScopes(app: FastifyInstance, { core, scopes }: Assembly): void {
  signed = new SignedProjectStrategy(() => core.creditMeter);
  // Every route module /v1 mounts, as /v1 mounts them.
  const v1 = scopes.find((scope) => scope.prefix === '/v1')!;
  app.register(apiScope, { prefix: '/signed/v1', strategy: signed, routes: v1.routes, policy: { rateLimit: core.apiKeyRateLimit } });
  const limiter = createRateLimiter({ requestsPerMinute: 2, redisUrl: null });
  app.register(apiScope, {
    prefix: '/policy/v1',
    strategy: new SignedProjectStrategy(() => new HeaderMeter()),
    routes: [core.routes.chatCompletions],
    policy: {
      rateLimit: { limiter, requestsPerMinute: 2, keyOf: (p) => `agent:${p.projectId}`, exceededMessage: 'Rate limit exceeded: too many requests per minute for this agent' },
      cors: { allowedHeaders: ['content-type', 'x-toy-signature'], exposedHeaders: ['x-request-id', 'x-toy-usage'] },
      security: [{ name: 'ToySignature', scheme: { type: 'apiKey', in: 'header', name: 'x-toy-signature' } }],
      errorBody: (_request, error, mapped) => ({ failed: true, status: mapped.status, code: error.code }),
      answerFields: (_request, _reply, answer) => ({ ...answer, toy_field: [] }),
      trailers: ['x-toy-usage'],
    },
  });
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), extendApp: mountScopes });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => upstream.reset());

const BOUNDARY = '----scope-seam';
const jsonl = '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"llama-3.1-8b-instruct-fast","messages":[{"role":"user","content":"hi"}]}}\n';
const upload = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${jsonl}\r\n--${BOUNDARY}--\r\n`,
);
const audio = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-tiny\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nnot really audio\r\n--${BOUNDARY}--\r\n`,
);
const multipartType = `multipart/form-data; boundary=${BOUNDARY}`;

interface Probe {
  method: string;
  path: string;
  body?: Buffer;
  type?: string;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const PROBES: Probe[] = [
  { method: 'POST', path: '/chat/completions', body: json({ model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }) },
  { method: 'POST', path: '/responses', body: json({ model: 'llama-3.1-8b-instruct-fast', input: 'hi' }) },
  { method: 'POST', path: '/embeddings', body: json({ model: 'all-minilm-l6-v2', input: 'hi' }) },
  { method: 'POST', path: '/moderations', body: json({ model: 'zlm-v1-moderation-edge', input: 'hi' }) },
  { method: 'GET', path: '/models' },
  { method: 'POST', path: '/files', body: upload, type: multipartType },
  { method: 'GET', path: '/files' },
  { method: 'GET', path: '/batches' },
  { method: 'POST', path: '/audio/transcriptions', body: audio, type: multipartType },
  { method: 'POST', path: '/systemone', body: json({ model: 'jev-latest' }) },
];

async function ask(prefix: string, probe: Probe, auth: Record<string, string>) {
  const headers: Record<string, string> = { ...auth };
  if (probe.body) headers['content-type'] = probe.type ?? 'application/json';
  return call(server.baseUrl, probe.method, `${prefix}${probe.path}`, { headers, rawBody: probe.body });
}

describe('every route module under a raw-body strategy', () => {
  it('answers each route as /v1 does, having verified exactly the bytes the route read', async () => {
    const tenant = await server.newTenant({ balanceUsd: 5 });
    for (const probe of PROBES) {
      const plain = await ask('/v1', probe, { 'x-api-key': tenant.key });
      const before = signed.verified.length;
      const viaSigned = await ask('/signed/v1', probe, { 'x-toy-project': tenant.projectId, 'x-toy-signature': sign(probe.body ?? '') });
      expect({ route: probe.path, status: viaSigned.status }).toEqual({ route: probe.path, status: plain.status });
      if (plain.status === 200) expect(viaSigned.body.object).toBe(plain.body.object);
      else expect(viaSigned.body).toEqual(plain.body);
      expect(signed.verified.length).toBe(before + 1);
      expect(signed.verified.at(-1)!.equals(probe.body ?? Buffer.alloc(0))).toBe(true);
      // The decision route's header stays on the decision route.
      expect(viaSigned.headers.has('x-typesafe-request-id')).toBe(probe.path === '/systemone');
    }
  });

  it('stores an upload made through the signed scope with the very bytes that were signed', async () => {
    const tenant = await server.newTenant();
    const auth = { 'x-toy-project': tenant.projectId };
    const created = await call(server.baseUrl, 'POST', '/signed/v1/files', {
      headers: { ...auth, 'content-type': multipartType, 'x-toy-signature': sign(upload) },
      rawBody: upload,
    });
    expect(created.status).toBe(200);
    const content = await fetch(`${server.baseUrl}/signed/v1/files/${created.body.id}/content`, { headers: { ...auth, 'x-toy-signature': sign('') } });
    expect(content.status).toBe(200);
    expect(await content.text()).toBe(jsonl);
  });

  it('refuses a body changed after signing on every route that takes one, before any work', async () => {
    const tenant = await server.newTenant({ balanceUsd: 5 });
    for (const probe of PROBES.filter((p) => p.body)) {
      const tampered = Buffer.concat([probe.body!, Buffer.from(' ')]);
      const res = await call(server.baseUrl, probe.method, `/signed/v1${probe.path}`, {
        headers: { 'x-toy-project': tenant.projectId, 'content-type': probe.type ?? 'application/json', 'x-toy-signature': sign(probe.body!) },
        rawBody: tampered,
      });
      expect({ route: probe.path, status: res.status, body: res.body }).toEqual({ route: probe.path, status: 401, body: { error: 'invalid_toy_signature' } });
    }
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('authentication before parsing', () => {
  const chat = '/signed/v1/chat/completions';
  const post = (projectId: string, bytes: string, signature: string) =>
    call(server.baseUrl, 'POST', chat, { headers: { 'x-toy-project': projectId, 'content-type': 'application/json', 'x-toy-signature': signature }, rawBody: bytes });

  it('an unsigned malformed or over-deep body is the scope refusal (401), never a 400 about its JSON', async () => {
    const tenant = await server.newTenant();
    for (const bytes of ['{"model": ', '['.repeat(5_000), '{"__proto__": {"x": 1}}']) {
      const res = await post(tenant.projectId, bytes, 'f'.repeat(64));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_toy_signature' });
    }
  });

  it('malformed JSON with a valid signature is the usual 400', async () => {
    const tenant = await server.newTenant();
    const bytes = '{"model": ';
    const res = await post(tenant.projectId, bytes, sign(bytes));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('a body over the route limit is 413 before it is verified', async () => {
    const tenant = await server.newTenant();
    const before = signed.verified.length;
    const bytes = `{"model": "${'x'.repeat(11 * 1024 * 1024)}"}`;
    const res = await post(tenant.projectId, bytes, sign(bytes));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: 'request_too_large' });
    expect(signed.verified.length).toBe(before);
  });
});

describe("a scope's own policy", () => {
  const chatBody = JSON.stringify({ model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
  const headers = (projectId: string, bytes = chatBody) => ({ 'x-toy-project': projectId, 'content-type': 'application/json', 'x-toy-signature': sign(bytes) });

  it('adds its answer fields and its meter headers to a JSON answer, and keys its rate limit with its own message', async () => {
    const tenant = await server.newTenant();
    const ok = await call(server.baseUrl, 'POST', '/policy/v1/chat/completions', { headers: headers(tenant.projectId), rawBody: chatBody });
    expect(ok.status).toBe(200);
    expect(ok.body.toy_field).toEqual([]);
    expect(ok.headers.get('x-toy-admitted')).toBe('llama-3.1-8b-instruct-fast');
    expect(ok.headers.get('x-toy-usage')).toBe('input_tokens=11, output_tokens=7');
    expect(ok.headers.get('x-ratelimit-limit-requests')).toBe('2');
    await call(server.baseUrl, 'POST', '/policy/v1/chat/completions', { headers: headers(tenant.projectId), rawBody: chatBody });
    const limited = await call(server.baseUrl, 'POST', '/policy/v1/chat/completions', { headers: headers(tenant.projectId), rawBody: chatBody });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ failed: true, status: 429, code: 'rate_limit_exceeded' });
    // /v1 keeps the envelope and its own limit.
    const plain = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: JSON.parse(chatBody) });
    expect(plain.status).toBe(200);
    expect(plain.body.toy_field).toBeUndefined();
    expect(plain.headers.has('x-toy-usage')).toBe(false);
  });

  it('sends the settlement headers of a stream as trailers it announced up front', async () => {
    const tenant = await server.newTenant();
    const bytes = JSON.stringify({ ...JSON.parse(chatBody), stream: true });
    const { request } = await import('undici');
    const res = await request(`${server.baseUrl}/policy/v1/chat/completions`, { method: 'POST', headers: headers(tenant.projectId, bytes), body: bytes });
    expect(res.statusCode).toBe(200);
    expect(res.headers.trailer).toBe('x-toy-usage');
    const text = await res.body.text();
    expect(text).toContain('data: [DONE]');
    expect(res.trailers['x-toy-usage']).toBe('input_tokens=11, output_tokens=7');
  });

  it("answers preflights of its paths with its CORS headers, and exposes its own headers", async () => {
    const preflight = await fetch(`${server.baseUrl}/policy/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type, x-toy-signature');
    const plainPreflight = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
    });
    expect(plainPreflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
    const tenant = await server.newTenant();
    const res = await call(server.baseUrl, 'POST', '/policy/v1/chat/completions', {
      headers: { ...headers(tenant.projectId), origin: 'https://agent.example' },
      rawBody: chatBody,
    });
    expect(res.headers.get('access-control-expose-headers')).toBe('x-request-id, x-toy-usage');
  });

  it('documents its routes with its own security scheme, and /v1 with the API key schemes', async () => {
    const doc = (await call(server.baseUrl, 'GET', '/v1/openapi.json')).body;
    expect(doc.components.securitySchemes.ToySignature).toEqual({ type: 'apiKey', in: 'header', name: 'x-toy-signature' });
    expect(doc.components.securitySchemes.ApiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(doc.components.securitySchemes.BearerApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/policy/v1/chat/completions'].post.security).toEqual([{ ToySignature: [] }]);
    expect(doc.paths['/v1/chat/completions'].post.security).toEqual([{ ApiKey: [] }, { BearerApiKey: [] }]);
  });
});
