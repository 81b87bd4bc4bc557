/**
 * Routing across engines, against fake engines in their own processes: one dead (killed),
 * one answering 503, one healthy. Deployments on one engine differ by upstream_model, so
 * the engine's own record of the requests' `model` says which deployment each call took.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { deadEngineUrl, startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { DEFAULT_CHAT, fail, stream } from '../../helpers/fake-upstream.js';
import { usageOf } from '../inference/setup.js';

let dead: string;
let failing: EngineProcess;
let healthy: EngineProcess;
let server: TestServer;
let key: string;
let projectId: string;

const deployment = (id: string, baseUrl: string, extra = '') => `      - { id: ${id}, base_url: ${baseUrl}, upstream_model: ${id}${extra} }\n`;

function yaml(): string {
  return `routing:
  strategy: weighted
  retries: 2
  cooldown: { failures: 3, window_seconds: 60, seconds: 30 }
models:
  my-llm:
    kind: chat
    deployments:
${deployment('gpu-dead', dead)}${deployment('gpu-503', failing.baseUrl)}${deployment('gpu-ok', healthy.baseUrl)}
  split-llm:
    kind: chat
    deployments:
${deployment('split-a', healthy.baseUrl, ', weight: 2')}${deployment('split-b', healthy.baseUrl, ', weight: 1')}${deployment('split-c', healthy.baseUrl, ', weight: 1')}
  down-llm:
    kind: chat
    price: { input_per_million_usd: 1, output_per_million_usd: 2 }
    deployments:
${deployment('down-dead', dead)}${deployment('down-503', failing.baseUrl)}
    fallbacks: [small-llm]
  small-llm:
    kind: chat
    base_url: ${healthy.baseUrl}
    upstream_model: small
    price: { input_per_million_usd: 3, output_per_million_usd: 6 }
  ctx-llm:
    kind: chat
    base_url: ${healthy.baseUrl}
    upstream_model: ctx-short
    context_window_fallbacks: [long-llm]
  long-llm:
    kind: chat
    base_url: ${healthy.baseUrl}
    upstream_model: ctx-long
  stream-llm:
    kind: chat
    deployments:
${deployment('stream-503', failing.baseUrl)}${deployment('stream-ok', healthy.baseUrl)}
  cut-llm:
    kind: chat
    deployments:
${deployment('cut-a', healthy.baseUrl)}${deployment('cut-b', healthy.baseUrl)}
  ra-llm:
    kind: chat
    deployments:
${deployment('ra-a', healthy.baseUrl)}${deployment('ra-b', healthy.baseUrl)}
`;
}

beforeAll(async () => {
  [dead, failing, healthy] = await Promise.all([deadEngineUrl(), startEngineProcess('fail-503'), startEngineProcess('healthy')]);
  server = await startTestServer({ yaml: yaml(), env: { RATE_LIMIT_RPM: '1000000' } });
  ({ key, projectId } = await server.newTenant({ balanceUsd: 100 }));
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([failing?.kill(), healthy?.kill()]);
});

const hello = (model: string) => ({ model, messages: [{ role: 'user', content: 'Hello' }] });
const chat = (model: string) => call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello(model) });

/** `sluice_upstream_requests_total` of one deployment and outcome, from /metrics. */
async function attempts(deploymentId: string, outcome: string): Promise<number> {
  const text = (await call(server.baseUrl, 'GET', '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith('sluice_upstream_requests_total{') && l.includes(`deployment="${deploymentId}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Runs `total` calls, `concurrency` at a time; returns their statuses. */
async function many(total: number, concurrency: number, one: () => Promise<{ status: number }>): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        statuses.push((await one()).status);
      }
    }),
  );
  return statuses;
}

describe('routing across engines', () => {
  it('serves every one of 300 calls with one healthy deployment of three; the dead one gets at most failures + 1 attempts', async () => {
    const statuses = await many(300, 1, () => chat('my-llm'));
    expect(statuses.filter((s) => s === 200)).toHaveLength(300);
    expect(await attempts('gpu-dead', 'failure')).toBeGreaterThanOrEqual(1);
    expect(await attempts('gpu-dead', 'failure')).toBeLessThanOrEqual(4);
    expect((await failing.models())['gpu-503']).toBeLessThanOrEqual(4);
    expect((await healthy.models())['gpu-ok']).toBe(300);
    const model = await call(server.baseUrl, 'GET', '/v1/models/my-llm', { key });
    expect(model.body.deployments.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([
      ['gpu-dead', 'cooling_down'],
      ['gpu-503', 'cooling_down'],
      ['gpu-ok', 'ready'],
    ]);
    expect(JSON.stringify(model.body)).not.toContain('127.0.0.1');
  }, 60_000);

  it('splits 2,000 calls 2:1:1 within 3 percentage points', async () => {
    const statuses = await many(2000, 16, () => chat('split-llm'));
    expect(statuses.every((s) => s === 200)).toBe(true);
    const counts = await healthy.models();
    const share = (id: string) => (counts[id] ?? 0) / 2000;
    expect(Math.abs(share('split-a') - 0.5)).toBeLessThanOrEqual(0.03);
    expect(Math.abs(share('split-b') - 0.25)).toBeLessThanOrEqual(0.03);
    expect(Math.abs(share('split-c') - 0.25)).toBeLessThanOrEqual(0.03);
  }, 60_000);

  it("honours a 429's Retry-After: the deployment gets nothing until it has passed", async () => {
    await healthy.script('/chat/completions', { type: 'json', status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '5' } });
    const limitedAt = Date.now();
    expect((await chat('ra-llm')).status).toBe(200);
    const statuses = await many(20, 4, () => chat('ra-llm'));
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await healthy.models()).toMatchObject({ 'ra-a': 1, 'ra-b': 21 });
    const model = await call(server.baseUrl, 'GET', '/v1/models/ra-llm', { key });
    const limited = model.body.deployments.find((d: { id: string }) => d.id === 'ra-a');
    expect(limited.state).toBe('cooling_down');
    const until = Date.parse(limited.until) - limitedAt;
    expect(until).toBeGreaterThanOrEqual(4_500);
    expect(until).toBeLessThanOrEqual(5_500);

    // Once the Retry-After has passed, the deployment takes calls again.
    while (Date.now() <= Date.parse(limited.until)) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await many(4, 1, () => chat('ra-llm'))).every((s) => s === 200)).toBe(true);
    expect((await healthy.models())['ra-a']).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('falls back when every deployment is down: the answer, the header and the usage record name the fallback, billed at its price', async () => {
    const res = await chat('down-llm');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('small-llm');
    expect(res.headers.get('x-sluice-fallback')).toBe('small-llm');
    const record = (await usageOf(server, projectId)).find((r) => r.requestId === res.headers.get('x-request-id'));
    // 11 tokens in at $3/M and 7 out at $6/M (the fallback's price), not down-llm's $1/M and $2/M.
    expect(record).toMatchObject({ model: 'small-llm', deployment: 'small-llm', inputTokens: 11, outputTokens: 7, costMicros: 75, status: 200 });
  });

  it('sends a context-length refusal to the context_window_fallbacks model', async () => {
    await healthy.script('/chat/completions', fail(400, "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.", { code: null }));
    const before = await healthy.models();
    const res = await chat('ctx-llm');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('long-llm');
    expect(res.headers.get('x-sluice-fallback')).toBe('long-llm');
    const after = await healthy.models();
    expect((after['ctx-short'] ?? 0) - (before['ctx-short'] ?? 0)).toBe(1);
    expect((after['ctx-long'] ?? 0) - (before['ctx-long'] ?? 0)).toBe(1);
  });

  it('passes a caller mistake (400) through without trying another deployment', async () => {
    await healthy.script('/chat/completions', fail(400, 'temperature must be at most 2', { code: 'invalid_value', param: 'temperature' }));
    const before = await healthy.models();
    const res = await chat('cut-llm');
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ message: 'temperature must be at most 2', type: 'invalid_request_error', code: 'invalid_value', param: 'temperature' });
    const after = await healthy.models();
    const sent = (id: string) => (after[id] ?? 0) - (before[id] ?? 0);
    expect(sent('cut-a') + sent('cut-b')).toBe(1);
  });

  it('serves a stream from another deployment when the first fails before its first chunk: the client sees one clean stream', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
    const chunks = await client.chat.completions.create({ model: 'stream-llm', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    let content = '';
    for await (const chunk of chunks) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe(DEFAULT_CHAT.content);
    expect((await failing.models())['stream-503']).toBe(1);
    expect((await healthy.models())['stream-ok']).toBe(1);
  });

  it('ends a stream cut after two chunks with an error event, no [DONE] and no second attempt, billed for what was delivered', async () => {
    await healthy.script('/chat/completions', stream(['one ', 'two ', 'three'], { closeAfter: 2, delayMs: 20 }));
    const before = await healthy.models();
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ ...hello('cut-llm'), stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const blocks = text.split('\n\n').filter((b) => b !== '');
    expect(blocks).toHaveLength(3);
    expect(blocks.slice(0, 2).map((b) => JSON.parse(b.slice('data: '.length)).choices[0].delta.content)).toEqual(['one ', 'two ']);
    expect(blocks[2]!.startsWith('event: error\ndata: {"error":')).toBe(true);
    expect(text).not.toContain('[DONE]');
    const after = await healthy.models();
    const sent = (id: string) => (after[id] ?? 0) - (before[id] ?? 0);
    expect(sent('cut-a') + sent('cut-b')).toBe(1);
    const requestId = res.headers.get('x-request-id');
    let record;
    for (let i = 0; i < 50 && !record; i++) {
      record = (await usageOf(server, projectId)).find((r) => r.requestId === requestId);
      if (!record) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Billed for the two chunks delivered, no more: estimated (no tokenizer), "one two " (8 bytes) is 2 tokens out.
    expect(record).toMatchObject({ model: 'cut-llm', status: 502, inputTokens: 2, outputTokens: 2 });
    expect(['cut-a', 'cut-b']).toContain(record!.deployment);
  });

  it('lists the deployments with their state in /readyz, without URLs', async () => {
    const res = await call(server.baseUrl, 'GET', '/readyz');
    expect(res.body.deployments['split-a']).toBe('ready');
    // Cooling down after the calls above, or (their cooldown over) found dead by the probe /readyz itself runs.
    expect(res.body.deployments['gpu-dead']).toMatch(/^(cooling down until \d{4}-|unreachable since \d{4}-.* \(ECONNREFUSED\)$)/);
    expect(JSON.stringify(res.body.deployments)).not.toContain('127.0.0.1');
  });
});

describe('least_busy', () => {
  let slow: EngineProcess;
  let busyServer: TestServer;

  beforeAll(async () => {
    slow = await startEngineProcess('slow:200');
    busyServer = await startTestServer({
      env: { RATE_LIMIT_RPM: '1000000' },
      yaml: `routing: { strategy: least_busy, queue_timeout_ms: 300 }
models:
  busy-llm:
    kind: chat
    deployments:
${deployment('busy-slow', slow.baseUrl)}${deployment('busy-fast', healthy.baseUrl)}
  gate-llm:
    kind: chat
    deployments:
${deployment('gate-one', slow.baseUrl, ', max_concurrency: 1')}`,
    });
  }, 60_000);
  afterAll(async () => {
    await busyServer?.close();
    await slow?.kill();
  });

  it('sends at least 80% of 200 concurrent calls to the fast engine beside a slow (200 ms) one', async () => {
    const tenant = await busyServer.newTenant({ balanceUsd: 10 });
    const chat = () => call(busyServer.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello('busy-llm') });
    // Both engines answer once (idle, ties go round robin), so both have been timed.
    for (let i = 0; i < 2; i++) expect((await chat()).status).toBe(200);
    expect([(await healthy.models())['busy-fast'], (await slow.models())['busy-slow']]).toEqual([1, 1]);
    // Timed and idle, each call goes to the quicker one (its first call, cold, may have been slow).
    for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
    expect([(await healthy.models())['busy-fast'], (await slow.models())['busy-slow']]).toEqual([4, 1]);
    // Twice: the second burst arrives on the first one's kept-alive connections, all within
    // a moment and before any answer is read, where in-flight counts alone split it evenly.
    for (let burst = 0; burst < 2; burst++) {
      const fastBefore = (await healthy.models())['busy-fast'] ?? 0;
      const slowBefore = (await slow.models())['busy-slow'] ?? 0;
      const results = await Promise.all(Array.from({ length: 200 }, chat));
      expect(results.every((r) => r.status === 200)).toBe(true);
      const fast = ((await healthy.models())['busy-fast'] ?? 0) - fastBefore;
      const slowCalls = ((await slow.models())['busy-slow'] ?? 0) - slowBefore;
      expect(fast + slowCalls).toBe(200);
      expect(fast).toBeGreaterThanOrEqual(160);
    }
  }, 60_000);

  it('queues a call over max_concurrency briefly, and answers 429 server_busy only once the wait exceeds queue_timeout_ms', async () => {
    const tenant = await busyServer.newTenant({ balanceUsd: 10 });
    // One slot, 200 ms per call, 300 ms of queue: the second call waits about 200 ms, the later ones would wait 400 ms or more.
    const results = await Promise.all(
      Array.from({ length: 4 }, () => call(busyServer.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello('gate-llm') })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
    const busy = results.find((r) => r.status === 429)!;
    expect(busy.body.error.code).toBe('server_busy');
    expect(busy.headers.get('retry-after')).toBe('1');
    expect((await slow.models())['gate-one']).toBe(2);
  });
});
