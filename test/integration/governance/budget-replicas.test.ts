/**
 * Key budgets on two replicas (src/main.ts processes) sharing PostgreSQL and Redis,
 * behind a round-robin proxy: a key with a day budget for 20 calls gets 200 concurrent
 * calls split across both, and spends no more than its budget, at least 18 of the 20 are
 * served, and the call after is refused with the reset time. The same on /v1/responses,
 * /v1/messages and MCP (with budgets for 10), and a batch run by both replicas' workers.
 * Needs the real PostgreSQL and Redis; skipped when either is absent.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, fetch as undiciFetch } from 'undici';
import { postgresReachable, postgresSchemaDatabase, tempDir } from '../../helpers/databases.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { spawnProcess, startRoundRobinProxy, type ClusterProcess, type RoundRobinProxy } from '../../helpers/cluster.js';
import { resetTimeOf, windowSpan } from '../../../src/domain/billing/budget-window.js';
import type { Database } from '../../../src/storage/db/database.js';

const ADMIN = 'budget-admin-token-0123456789abcdef';
const MODEL = 'budget-model';
// 1,000 micro-dollars a token; the upstream reports 10 input and 10 output tokens: $0.02 a call.
const CALL_MICROS = 20_000;
const ready = (await postgresReachable()) && (await redisReachable());

let database: Database;
let upstream: FakeUpstream;
let proxy: RoundRobinProxy;
const replicas: ClusterProcess[] = [];

/** The replicas' environment: the database, the config file and the data directory are added before they start. */
const env: Record<string, string> = { REDIS_URL, SLUICE_ADMIN_TOKEN: ADMIN, FREE_CREDITS_USD: '1000' };
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body };
}

/** A new project with plenty of credit and one key with a day budget for `calls` calls. */
async function budgetedKey(calls: number): Promise<{ id: string; key: string; projectId: string }> {
  const project = await json(`${proxy.baseUrl}/admin/v1/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'budgets' }) });
  expect(project.status).toBe(200);
  const body = JSON.stringify({ budget: { limit_usd: (calls * CALL_MICROS) / 1_000_000, window: 'day' } });
  const key = await json(`${proxy.baseUrl}/admin/v1/projects/${project.body.id}/keys`, { method: 'POST', headers: admin, body });
  expect(key.status, JSON.stringify(key.body)).toBe(200);
  return { id: key.body.id, key: key.body.key, projectId: project.body.id };
}

async function spentBy(keyId: string): Promise<{ calls: number; micros: number }> {
  const row = (await sql<{ n: string; micros: string | null }>`select count(*) as n, sum(cost_micros) as micros from usage_records where key_id = ${keyId}`.execute(database.db)).rows[0]!;
  return { calls: Number(row.n), micros: Number(row.micros ?? 0) };
}

interface Route {
  name: string;
  path: string;
  headers?: Record<string, string>;
  body: unknown;
  /** The refusal's code and message, as the route's envelope carries them. */
  refusal(status: number, body: any): { code: string | null; message: string };
}

const openAIRefusal = (_status: number, body: any) => ({ code: body?.error?.code ?? null, message: body?.error?.message ?? '' });

const ROUTES: Route[] = [
  {
    name: '/v1/chat/completions',
    path: '/v1/chat/completions',
    body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
    refusal: openAIRefusal,
  },
  {
    name: '/v1/responses',
    path: '/v1/responses',
    body: { model: MODEL, input: 'hi', max_output_tokens: 10, store: false },
    refusal: openAIRefusal,
  },
  {
    name: '/v1/messages',
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01' },
    body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
    // Anthropic's envelope has no code: a budget refusal is a 429 rate_limit_error naming the budget.
    refusal: (status, body) => ({ code: status === 429 && body?.error?.type === 'rate_limit_error' ? 'budget_exceeded' : null, message: body?.error?.message ?? '' }),
  },
  {
    name: 'MCP chat tool',
    path: '/mcp',
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } } },
    refusal: (_status, body) => ({ code: body?.result?.structuredContent?.error?.code ?? null, message: body?.result?.structuredContent?.error?.message ?? '' }),
  },
];

/** A connection per call: a burst does not reuse a connection the proxy is closing for idleness (a reset no replica caused). */
const noKeepAlive = new Agent({ pipelining: 0 });

/** One call through the proxy: its status (an MCP tool error's own status), and the refusal's code and message. */
async function callRoute(route: Route, key: string): Promise<{ status: number; code: string | null; message: string; reset: string | null }> {
  const res = await undiciFetch(`${proxy.baseUrl}${route.path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...route.headers },
    body: JSON.stringify(route.body),
    dispatcher: noKeepAlive,
  });
  const text = await res.text();
  const data = res.headers.get('content-type')?.startsWith('text/event-stream') ? /^data: (.*)$/m.exec(text)![1]! : text;
  const body = JSON.parse(data);
  const status = route.path === '/mcp' ? (body.result?.isError ? body.result.structuredContent.status : res.status) : res.status;
  const { code, message } = status === 200 ? { code: null, message: '' } : route.refusal(status, body);
  return { status, code, message, reset: res.headers.get('x-sluice-budget-reset') };
}

const spentMessage = (reset: string, limit: string) =>
  new RegExp(`^This key's day budget of \\$${limit.replace('.', '\\.')} (is spent|has \\$[0-9.]+ left, less than this request needs \\(at least \\$[0-9.]+\\)); it resets at ${reset}\\.$`);

beforeAll(async () => {
  if (!ready) return;
  const schema = await postgresSchemaDatabase();
  database = schema.database;
  env.DATABASE_URL = schema.url;
  upstream = await startFakeUpstream();
  upstream.chat({ usage: { prompt_tokens: 10, completion_tokens: 10 } });
  const dir = tempDir('sluice-budgets-');
  const configFile = path.join(dir, 'sluice.yaml');
  writeFileSync(
    configFile,
    [
      'models:',
      `  ${MODEL}:`,
      '    backend: openai',
      `    base_url: ${upstream.baseUrl}`,
      '    price: { input_per_million_usd: 1000, output_per_million_usd: 1000 }',
      // A loaded machine must not refuse, for the wait, calls the budget pays for.
      'billing: { hold_wait_ms: 60000 }',
      'batches: { lease_seconds: 2, shard_lines: 5, retry_base_ms: 20, global_concurrency: 4 }',
      `budgets: { redis_prefix: "budgets-${path.basename(dir)}" }`,
      `rate_limits: { redis_prefix: "budgets-rl-${path.basename(dir)}", requests_per_minute: 100000 }`,
      '',
    ].join('\n'),
  );
  Object.assign(env, { SLUICE_CONFIG: configFile, DATA_DIR: dir });
  // The first replica migrates the schema.
  replicas.push(await spawnProcess('replica', env));
  replicas.push(await spawnProcess('replica', env));
  proxy = await startRoundRobinProxy(() => replicas.map((r) => r.baseUrl));
}, 120_000);

afterAll(async () => {
  for (const r of replicas) r.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.exited));
  await proxy?.close();
  await upstream?.close();
  await database?.close();
  await noKeepAlive.close();
});

describe.skipIf(!ready)('key budgets on two replicas sharing PostgreSQL and Redis', () => {
  it.each([
    { route: ROUTES[0]!, budgetCalls: 20, burst: 200 },
    ...ROUTES.slice(1).map((route) => ({ route, budgetCalls: 10, burst: 60 })),
  ])('$route.name: $burst concurrent calls on a budget for $budgetCalls', async ({ route, budgetCalls, burst }) => {
    const key = await budgetedKey(budgetCalls);
    const outcomes = await Promise.all(Array.from({ length: burst }, () => callRoute(route, key.key)));
    const served = outcomes.filter((o) => o.status === 200).length;
    const limit = ((budgetCalls * CALL_MICROS) / 1_000_000).toFixed(2);
    const reset = resetTimeOf(windowSpan('day', Date.now()))!;
    // Both replicas answered.
    expect(proxy.served.filter((n) => n > 0)).toHaveLength(2);
    expect(served).toBeGreaterThanOrEqual(budgetCalls - 2);
    for (const refused of outcomes.filter((o) => o.status !== 200)) {
      expect(refused).toMatchObject({ status: 429, code: 'budget_exceeded' });
    }
    // Every served call was billed, and never beyond the budget (each call's cost is within its hold).
    const spent = await spentBy(key.id);
    expect(spent.calls).toBe(served);
    expect(spent.micros).toBe(served * CALL_MICROS);
    expect(spent.micros).toBeLessThanOrEqual(budgetCalls * CALL_MICROS);
    // The call after is refused, naming the window, the limit and the reset.
    const after = await callRoute(route, key.key);
    expect(after).toMatchObject({ status: 429, code: 'budget_exceeded' });
    if (route.path !== '/mcp') expect(after.reset).toBe(reset);
    expect(after.message).toMatch(spentMessage(reset, limit));
  }, 120_000);

  it('a batch run by both replicas’ workers serves the lines the budget pays for; the rest fail budget_exceeded', async () => {
    const key = await budgetedKey(5);
    const lines = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } }),
    );
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${lines.join('\n')}\n`]), 'input.jsonl');
    const file = await json(`${proxy.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key.key }, body: form });
    expect(file.status).toBe(200);
    const created = await json(`${proxy.baseUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.body.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    expect(created.status).toBe(200);
    let batch = created.body;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      batch = (await json(`${proxy.baseUrl}/v1/batches/${batch.id}`, { headers: { 'x-api-key': key.key } })).body;
    }
    expect(batch.status).toBe('completed');
    const spent = await spentBy(key.id);
    expect(batch.request_counts).toEqual({ total: 12, completed: spent.calls, failed: 12 - spent.calls });
    expect(spent.calls).toBeGreaterThanOrEqual(3);
    expect(spent.micros).toBeLessThanOrEqual(5 * CALL_MICROS);
    const errors = await json(`${proxy.baseUrl}/v1/files/${batch.error_file_id}/content`, { headers: { 'x-api-key': key.key } });
    const failures = String(errors.body)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).error);
    expect(failures).toHaveLength(12 - spent.calls);
    const reset = resetTimeOf(windowSpan('day', Date.now()))!;
    for (const failure of failures) {
      expect(failure.code).toBe('budget_exceeded');
      expect(failure.message).toMatch(new RegExp(`^\\[legacy:http_429\\] This key's day budget of \\$0\\.10 .*; it resets at ${reset}\\.$`));
    }
  }, 120_000);
});
