/**
 * Every call with a known project is one entry: a call refused before its handler (the
 * key's rate limit, a body that is not JSON or not valid) and one refused by the meter (the
 * key's budget, its model list, the project's credit), each with its status and the error
 * code the client got, no attempts and nothing charged; a request with no key or a bad one
 * has no project and no entry. A model called as an MCP tool (the official client) is one
 * entry of route `mcp/<tool>`, wire and scope `mcp`, with its model, tokens and cost as
 * its usage record says; a refused tool call is one too. Another project's entry is 404.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { usageOf } from '../inference/setup.js';
import { admin, FAST_FLUSH_YAML, flushLog } from './setup.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({
    yaml: `${FAST_FLUSH_YAML}models:
  llm:
    kind: chat
    price: { input_per_million_usd: 2, output_per_million_usd: 4 }
    base_url: ${upstream.baseUrl}
`,
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

const hello = { model: 'llm', messages: [{ role: 'user', content: 'hello' }] };

/** A project with credit and a key with this policy. */
async function keyWith(policy: Record<string, unknown>, balanceUsd = 10): Promise<{ projectId: string; key: string; keyId: string }> {
  const tenant = await server.newTenant({ balanceUsd });
  const { record, key } = await server.core.projects.createKey(tenant.projectId, 'policy', policy);
  return { projectId: tenant.projectId, key, keyId: record.id };
}

/** The entry as the operator reads it (a key refused for its rate limit could not read it itself), in the key's project. */
async function entryOf(id: string, tenant: { projectId: string }): Promise<any> {
  let body: any = null;
  await vi.waitFor(async () => {
    await flushLog(server);
    const res = await admin(server, 'GET', `/requests/${id}`);
    expect(res.status).toBe(200);
    body = res.body;
  });
  expect(body.project_id).toBe(tenant.projectId);
  return body;
}

async function entriesOf(key: string): Promise<any[]> {
  await flushLog(server);
  return (await call(server.baseUrl, 'GET', '/v1/requests?limit=100', { key })).body.data;
}

const chat = (key: string, body: unknown = hello) => call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body });

describe('refused calls', () => {
  it("logs a call refused by the key's rate limit, with its status and code", async () => {
    const tenant = await keyWith({ rpm: 1 });
    expect((await chat(tenant.key)).status).toBe(200);
    const refused = await chat(tenant.key);
    expect(refused.status).toBe(429);
    const entry = await entryOf(refused.headers.get('x-request-id')!, tenant);
    expect(entry).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded', key_id: tenant.keyId, route: '/v1/chat/completions', scope: 'v1', model: null, cost_usd: 0, attempts: [] });
    expect(entry.usage).toEqual({ input_tokens: 0, output_tokens: 0, cached_input_tokens: 0 });
  });

  it('logs a body that is not JSON and a body that is not valid, each with the code the client got', async () => {
    const tenant = await keyWith({});
    const notJson = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, headers: { 'content-type': 'application/json' }, rawBody: '{"model": ' });
    expect(notJson.status).toBe(400);
    expect(await entryOf(notJson.headers.get('x-request-id')!, tenant)).toMatchObject({ status: 400, error_code: notJson.body.error.code, model_requested: '' });
    expect(notJson.body.error.code).toBe('invalid_json');
    const invalid = await chat(tenant.key, { model: 'llm', messages: 'not a list' });
    expect(invalid.status).toBe(400);
    expect(await entryOf(invalid.headers.get('x-request-id')!, tenant)).toMatchObject({ status: 400, error_code: invalid.body.error.code, model_requested: 'llm', attempts: [] });
  });

  it("logs calls refused by the key's budget, its model list and the project's credit", async () => {
    const budget = await keyWith({ budget: { limit_usd: 0, window: 'day' } });
    const overBudget = await chat(budget.key);
    expect(overBudget.status).toBe(429);
    expect(await entryOf(overBudget.headers.get('x-request-id')!, budget)).toMatchObject({ status: 429, error_code: 'budget_exceeded', cost_usd: 0 });

    const listed = await keyWith({ models: ['other-*'] });
    const notListed = await chat(listed.key);
    expect(notListed.status).toBe(404);
    expect(await entryOf(notListed.headers.get('x-request-id')!, listed)).toMatchObject({ status: 404, error_code: 'model_not_found', model_requested: 'llm', attempts: [] });

    const broke = await keyWith({}, 0);
    const noCredit = await chat(broke.key);
    expect(noCredit.status).toBe(429);
    expect(noCredit.body.error.code).toBe('insufficient_quota');
    expect(await entryOf(noCredit.headers.get('x-request-id')!, broke)).toMatchObject({ status: 429, error_code: 'insufficient_quota', cost_usd: 0 });
  });

  it('makes no entry for a request with no key or a bad key (no project)', async () => {
    const noKey = await call(server.baseUrl, 'POST', '/v1/chat/completions', { body: hello });
    const { key } = await keyWith({});
    const badKey = await chat(`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`);
    expect([noKey.status, badKey.status]).toEqual([401, 403]);
    expect(badKey.body.error.code).toBe('invalid_api_key');
    await flushLog(server);
    for (const res of [noKey, badKey]) {
      expect((await admin(server, 'GET', `/requests/${res.headers.get('x-request-id')}`)).status).toBe(404);
    }
  });
});

describe('MCP tool calls', () => {
  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  }

  it('logs one entry per tool call, as its usage record says, and a refused one with its status; another project sees 404', async () => {
    const tenant = await keyWith({});
    const client = await connect(tenant.key);
    try {
      const answer = await client.callTool({ name: 'chat', arguments: hello });
      expect(answer.isError).not.toBe(true);
      const refused = await client.callTool({ name: 'chat', arguments: { model: 'no-such-model', messages: hello.messages } });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
    const [record] = await usageOf(server, tenant.projectId);
    let entries: any[] = [];
    await vi.waitFor(async () => {
      entries = await entriesOf(tenant.key);
      expect(entries).toHaveLength(2);
    });
    const [failed, served] = entries;
    expect(served).toMatchObject({ route: 'mcp/chat', wire: 'mcp', scope: 'mcp', key_id: tenant.keyId, model_requested: 'llm', model: 'llm', status: 200, error_code: null });
    expect(record!.route).toBe('mcp/chat');
    expect(served.id).toBe(record!.requestId);
    expect(served.usage).toMatchObject({ input_tokens: record!.inputTokens, output_tokens: record!.outputTokens });
    expect(served.cost_usd).toBe(record!.costMicros / 1_000_000);
    expect(served.cost_usd).toBeGreaterThan(0);
    const detail = await entryOf(served.id, tenant);
    expect(detail.attempts).toHaveLength(1);
    expect(failed).toMatchObject({ route: 'mcp/chat', wire: 'mcp', scope: 'mcp', model_requested: 'no-such-model', status: 400, error_code: 'model_not_found', cost_usd: 0 });

    const other = await keyWith({});
    expect((await call(server.baseUrl, 'GET', `/v1/requests/${served.id}`, { key: other.key })).status).toBe(404);
  });

  it('logs no entry for listing the tools', async () => {
    const tenant = await keyWith({});
    const client = await connect(tenant.key);
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    expect(await entriesOf(tenant.key)).toEqual([]);
  });
});
