/**
 * An MCP tool call is labelled with the `x-sluice-tags` header of its HTTP request: its
 * usage record names the tags; a bad header is refused with a 400 in the MCP endpoint's JSON-RPC
 * envelope naming it, and nothing runs.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { usageOf } from '../inference/setup.js';

const CHAT = 'gpt-oss-120b';
let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const yaml = `models:\n  ${CHAT}: {"backend": "openai", "base_url": "${upstream.baseUrl}"}\n`;
  server = await startTestServer({ yaml });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

it("keeps the request's x-sluice-tags on the tool call's usage record; a bad header is a 400 naming it", async () => {
  const { key, projectId } = await server.newTenant();
  const client = new Client({ name: 'test', version: '1.0.0' });
  const headers = { authorization: `Bearer ${key}`, 'x-sluice-tags': 'agent,mcp-run' };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), { requestInit: { headers } }));
  try {
    const result = await client.callTool({ name: 'chat', arguments: { model: CHAT, messages: [{ role: 'user', content: 'Hello' }] } });
    expect(result.isError).not.toBe(true);
  } finally {
    await client.close();
  }
  const records = await usageOf(server, projectId);
  expect(records.map((r) => [r.route, r.tags])).toEqual([['mcp/chat', ['agent', 'mcp-run']]]);

  const refused = await call(server.baseUrl, 'POST', '/mcp', {
    headers: { authorization: `Bearer ${key}`, 'x-sluice-tags': 'no good', accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: { model: CHAT, messages: [{ role: 'user', content: 'Hi' }] } } },
  });
  expect(refused.status).toBe(400);
  expect(refused.body).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'x-sluice-tags: a tag may hold only letters, digits and . _ : / = - (got "no good")',
      data: { status: 400, type: 'invalid_request_error', code: 'invalid_request_error', param: 'x-sluice-tags' },
    },
  });
  expect(await usageOf(server, projectId)).toHaveLength(1);
});
