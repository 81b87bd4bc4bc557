/**
 * The caller/meter seam: the unchanged chat route module mounted under a second prefix
 * with an authentication strategy and a meter written here, a strategy that verifies
 * the exact body bytes, a meter's refusal carrying a payment challenge, and a scope's
 * own status for an error kind.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Assembly } from '../../../src/composition/features.js';
import type { Caller, Principal } from '../../../src/domain/identity/caller.js';
import type { Admission, Meter, MeteredCall, SettledUsage } from '../../../src/domain/billing/meter.js';
import { AppError, insufficientQuota } from '../../../src/domain/shared/errors.js';
import { apiScope } from '../../../src/http/scopes/api-scope.js';
import type { AuthStrategy } from '../../../src/http/auth/strategy.js';
import { ChatCompletionBody } from '../../../src/wire/chat-completions/body.js';
import { parseBody } from '../../../src/wire/validate.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { inferenceYaml, usageOf } from '../inference/setup.js';

const SECRET = 'toy-shared-secret';
const AGENT_PROJECT = '00000000-0000-4000-8000-000000000001';

/** A meter that remembers what it saw; `refuse` makes admission throw. */
class ToyMeter implements Meter {
  readonly admitted: Array<{ principal: Principal; call: MeteredCall }> = [];
  readonly settled: SettledUsage[] = [];
  released = 0;
  refuse: (() => AppError) | null = null;

  admit(principal: Principal, call: MeteredCall): Admission {
    if (this.refuse) throw this.refuse();
    this.admitted.push({ principal, call });
    return {
      settle: async (usage) => {
        this.settled.push(usage);
        return { record: null, headers: null };
      },
      release: () => {
        this.released++;
      },
    };
  }
}

const agentCaller = (meter: Meter, subject: string): Caller => ({
  principal: { kind: 'gateway_agent', projectId: AGENT_PROJECT, keyId: null, subject, payer: { kind: 'intermediary', intermediaryId: 'toy' } },
  meter,
});

const sameSecret = (given: string | undefined, expected: string) => {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** Admits a request that carries the shared secret in a header. */
class SharedSecretStrategy implements AuthStrategy {
  readonly needs = 'headers';
  constructor(private readonly meter: Meter) {}
  authenticate(request: FastifyRequest): Caller {
    if (!sameSecret(request.headers['x-toy-secret'] as string | undefined, SECRET)) {
      throw new AppError('authentication', 'toy secret required', { code: 'toy_unauthenticated' });
    }
    return agentCaller(this.meter, String(request.headers['x-toy-agent'] ?? 'anonymous'));
  }
}

/** Admits a request whose HMAC-SHA256 over the exact body bytes is in `x-toy-signature`. */
class BodySignatureStrategy implements AuthStrategy {
  readonly needs = 'raw-body';
  constructor(private readonly meter: Meter) {}
  authenticate(request: FastifyRequest): Caller {
    const expected = createHmac('sha256', SECRET).update(request.rawBody ?? Buffer.alloc(0)).digest('hex');
    if (!sameSecret(request.headers['x-toy-signature'] as string | undefined, expected)) {
      throw new AppError('authentication', 'bad signature', {
        code: 'invalid_signature',
        challenge: { body: { error: 'invalid_gateway_signature' } },
      });
    }
    return agentCaller(this.meter, 'signed-agent');
  }
}

const hello = { model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'Hello' }] };

let upstream: FakeUpstream;
let server: TestServer;
const toyMeter = new ToyMeter();
const signedMeter = new ToyMeter();

function mountToyScopes(app: FastifyInstance, { core }: Assembly): void {
  const routes = [core.routes.chatCompletions];
  const rateLimit = core.apiKeyRateLimit;
  app.register(apiScope, { prefix: '/toy/v1', strategy: new SharedSecretStrategy(toyMeter), routes, policy: { rateLimit } });
  app.register(apiScope, {
    prefix: '/toy402/v1',
    strategy: new SharedSecretStrategy(toyMeter),
    routes,
    policy: { rateLimit, statusOverrides: { insufficient_quota: 402 } },
  });
  app.register(apiScope, { prefix: '/signed/v1', strategy: new BodySignatureStrategy(signedMeter), routes, policy: { rateLimit } });
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), extendApp: mountToyScopes });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.reset();
  toyMeter.refuse = null;
});

describe('the chat route under a second prefix', () => {
  it('answers with the toy strategy’s caller and charges the toy meter, not a project', async () => {
    const tenant = await server.newTenant();
    const before = toyMeter.admitted.length;
    const res = await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', {
      headers: { 'x-toy-secret': SECRET, 'x-toy-agent': 'agent-7' },
      body: { ...hello, max_tokens: 9 },
    });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('chat.completion');
    expect(res.body.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect(upstream.count('/chat/completions')).toBe(1);
    expect(toyMeter.admitted.length - before).toBe(1);
    const { principal, call: metered } = toyMeter.admitted.at(-1)!;
    expect(principal).toMatchObject({ kind: 'gateway_agent', subject: 'agent-7', payer: { kind: 'intermediary' } });
    expect(metered).toMatchObject({ model: 'llama-3.1-8b-instruct-fast', route: '/v1/chat/completions', requestId: res.headers.get('x-request-id'), maxOutputTokens: 9 });
    expect(metered.inputTokens).toBeGreaterThanOrEqual(5);
    expect(toyMeter.settled.at(-1)).toEqual({ inputTokens: 11, outputTokens: 7, status: 200, deployment: 'llama-3.1-8b-instruct-fast' });
    // The plain route still answers by API key, and bills the project as before.
    const plain = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello });
    expect(plain.status).toBe(200);
    expect(await usageOf(server, tenant.projectId)).toHaveLength(1);
  });

  it("refuses a request without the toy secret with the strategy's error, before any upstream call", async () => {
    const res = await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', { body: hello });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { message: 'toy secret required', type: 'authentication_error', code: 'toy_unauthenticated', param: null } });
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    // An API key is not a credential in the toy scope.
    const tenant = await server.newTenant();
    expect((await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', { key: tenant.key, body: hello })).status).toBe(401);
    expect(upstream.count('/chat/completions')).toBe(0);
  });

  it('releases the admission when the upstream fails', async () => {
    upstream.flake('/chat/completions', 1, 500);
    const released = toyMeter.released;
    const settled = toyMeter.settled.length;
    const res = await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', { headers: { 'x-toy-secret': SECRET }, body: hello });
    expect(res.status).toBe(502);
    expect(toyMeter.released).toBe(released + 1);
    expect(toyMeter.settled.length).toBe(settled);
  });
});

describe('a stream and its admission', () => {
  const streamed = parseBody(ChatCompletionBody, { ...hello, stream: true });
  const context = (signal: AbortSignal) => ({ requestId: 'req_stream_seam', signal, route: '/v1/chat/completions' });

  it('a stream never read is released when its client leaves (its relay never starts, so only the service can release it)', async () => {
    const meter = new ToyMeter();
    const client = new AbortController();
    await server.core.inference.chatCompletions.openStream(agentCaller(meter, 'leaver'), streamed, context(client.signal));
    expect(meter.admitted).toHaveLength(1);
    expect(meter.released).toBe(0);
    client.abort();
    expect(meter.released).toBe(1);
    expect(meter.settled).toHaveLength(0);
  });

  it('a stream read to the end is settled once, and a later disconnect releases nothing', async () => {
    const meter = new ToyMeter();
    const client = new AbortController();
    const chunks = await server.core.inference.chatCompletions.openStream(agentCaller(meter, 'reader'), streamed, context(client.signal));
    let count = 0;
    for await (const _chunk of chunks) count++;
    expect(count).toBeGreaterThan(0);
    expect(meter.settled).toHaveLength(1);
    expect(meter.settled[0]!.status).toBe(200);
    client.abort();
    expect(meter.released).toBe(0);
  });
});

describe('refusals with challenges and scope statuses', () => {
  it('a meter refusal carrying a challenge is a 402 with its headers and its body in place of the envelope', async () => {
    const quote = { x402Version: 2, error: 'payment required', accepts: [{ scheme: 'exact', amount: '1000' }] };
    toyMeter.refuse = () =>
      new AppError('payment_required', 'Payment required', {
        code: 'payment_required',
        challenge: { headers: { 'payment-required': Buffer.from(JSON.stringify(quote)).toString('base64'), 'www-authenticate': 'Payment realm="toy"' }, body: quote },
      });
    const res = await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', { headers: { 'x-toy-secret': SECRET }, body: hello });
    expect(res.status).toBe(402);
    expect(res.body).toEqual(quote);
    expect(JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString())).toEqual(quote);
    expect(res.headers.get('www-authenticate')).toBe('Payment realm="toy"');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(upstream.count('/chat/completions')).toBe(0);
  });

  it('a scope may answer insufficient_quota with 402; the plain scope keeps 429', async () => {
    toyMeter.refuse = insufficientQuota;
    const quota = await call(server.baseUrl, 'POST', '/toy402/v1/chat/completions', { headers: { 'x-toy-secret': SECRET }, body: hello });
    expect(quota.status).toBe(402);
    expect(quota.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    const plain = await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', { headers: { 'x-toy-secret': SECRET }, body: hello });
    expect(plain.status).toBe(429);
  });
});

describe('a strategy that verifies the exact body bytes', () => {
  const sign = (bytes: string) => createHmac('sha256', SECRET).update(bytes).digest('hex');

  it('admits a correctly signed body, and the handler reads the body parsed from those bytes', async () => {
    const bytes = JSON.stringify({ ...hello, max_tokens: 3 });
    const res = await call(server.baseUrl, 'POST', '/signed/v1/chat/completions', {
      headers: { 'content-type': 'application/json', 'x-toy-signature': sign(bytes) },
      rawBody: bytes,
    });
    expect(res.status).toBe(200);
    expect(upstream.requests[0]!.body.max_tokens).toBe(3);
    expect(signedMeter.admitted.at(-1)!.principal.subject).toBe('signed-agent');
  });

  it('refuses the same JSON with other bytes (a signature over the bytes, not the value), with the challenge body', async () => {
    const signed = JSON.stringify(hello);
    const reformatted = JSON.stringify(hello, null, 2);
    const res = await call(server.baseUrl, 'POST', '/signed/v1/chat/completions', {
      headers: { 'content-type': 'application/json', 'x-toy-signature': sign(signed) },
      rawBody: reformatted,
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_gateway_signature' });
    expect(upstream.count('/chat/completions')).toBe(0);
  });
});
