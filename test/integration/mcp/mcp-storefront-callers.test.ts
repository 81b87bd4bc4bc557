/**
 * Storefront callers on `/mcp`: an agent access token calls `chat` on the agent's
 * Credits, a receipt on its credit (usage records `mcp/chat` with that payer, the ledger
 * drawn), a bad token answers 401 with `WWW-Authenticate: Bearer resource_metadata=…`, and
 * that metadata (RFC 9728) names the storefront as the authorization server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newId } from '../../../src/domain/shared/ids.js';
import { newReceiptId, receiptHash } from '../../../src/domain/storefront/receipts.js';
import { storefrontProjectId } from '../../../src/domain/storefront/sellers.js';
import { startStorefront, type StorefrontEnv } from '../storefront/support.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront({ agents: 1 });
});
afterAll(async () => env?.close());

const store = () => env.server.features.storefront.services!.store;
const hello = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50 };

async function fund(holder: { kind: 'agent'; agentId: string } | { kind: 'receipt'; receiptId: string }, micros: number) {
  await store().purchase({
    id: newId('mov_'), sellerId: 'sluice', holder, kind: 'purchase', amountMicros: micros,
    paymentRef: `test:${newId('ref_')}`, rail: 'card', detail: null, createdAtMs: Date.now(),
  });
}

async function callWith(authorization: string) {
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${env.server.baseUrl}/mcp`), { requestInit: { headers: { authorization } } }));
  const result: any = await client.callTool({ name: 'chat', arguments: hello });
  await client.close();
  return result;
}

const usage = async () => (await env.server.core.repositories.usage.listByProject(storefrontProjectId('sluice'), 10)).items;

describe('storefront callers on /mcp', () => {
  it("an agent token calls chat on the agent's Credits", async () => {
    const agent = env.agents[0]!;
    await fund({ kind: 'agent', agentId: agent.id }, 1_000_000);
    const result = await callWith(`Bearer ${await env.tokenOf(agent)}`);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ object: 'chat.completion' });
    const account = await store().account('sluice', { kind: 'agent', agentId: agent.id });
    // 11 input tokens at $1/M and 7 output at $2/M: 25 micro-dollars, as on the storefront's own chat route.
    expect(account).toMatchObject({ balanceMicros: 1_000_000 - 25, consumedMicros: 25 });
    expect((await usage())[0]).toMatchObject({ route: 'mcp/chat', payer: { kind: 'agent', id: agent.id } });
  });

  it('a receipt calls chat on its credit, and an unknown receipt is refused as a tool result', async () => {
    const receipt = newReceiptId();
    await fund({ kind: 'receipt', receiptId: receiptHash(receipt) }, 10_000);
    const result = await callWith(`Receipt ${receipt}`);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect((await store().account('sluice', { kind: 'receipt', receiptId: receiptHash(receipt) }))!.balanceMicros).toBe(10_000 - 25);
    expect((await usage())[0]).toMatchObject({ route: 'mcp/chat', payer: { kind: 'receipt', id: receiptHash(receipt) } });

    const unknown = await callWith(`Receipt ${newReceiptId()}`);
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ status: 401, error: { code: 'invalid_receipt' } });
  });

  it('answers a bad agent token with 401 and the resource metadata to look at', async () => {
    const response = await fetch(`${env.server.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer not.a.token' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${env.server.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { status: 401, code: 'invalid_token' } } });
  });

  it('serves the protected-resource metadata naming the storefront', async () => {
    const response = await fetch(`${env.server.baseUrl}/.well-known/oauth-protected-resource/mcp`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      resource: `${env.server.baseUrl}/mcp`,
      authorization_servers: [env.url],
      bearer_methods_supported: ['header'],
      resource_name: 'Sluice MCP tools',
    });
  });
});
