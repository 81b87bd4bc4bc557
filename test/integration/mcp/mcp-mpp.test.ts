/**
 * A tool call paid per call over MPP with no credential, by an `mppx` MCP client
 * (`McpClient.wrap` around the official client) with the storefront's built-in fake/charge
 * method: the challenge rides beside x402's in the tool result's
 * `_meta["org.paymentauth/payment-required"]`, the client pays and retries with
 * `_meta["org.paymentauth/credential"]`, the call is served and credited once (one
 * purchase on the mpp rail, one draw), the answer carries `_meta["org.paymentauth/receipt"]`,
 * and the credential replayed is `payment_consumed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Credential, Method } from 'mppx';
import { McpClient } from 'mppx/mcp/client';
import { fakeCharge } from '../../../src/adapters/payments/mpp-fake-method.js';
import { receiptHash } from '../../../src/domain/storefront/receipts.js';
import { startStorefront, type StorefrontEnv } from '../storefront/support.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront({
    yamlExtra: '  mpp: { realm: sluice.test, method: fake }\n',
    env: { STOREFRONT_MPP_SECRET_KEY: 'a-test-secret-of-at-least-32-bytes-long' },
  });
});
afterAll(async () => env?.close());

const endpoint = () => new URL(`${env.server.baseUrl}/mcp`);

const ledger = () =>
  env.server.core.database.db.selectFrom('storefront_ledger').select(['kind', 'amount_micros', 'rail', 'holder_kind', 'holder_id']).orderBy('created_at').orderBy('kind', 'desc').execute();

const hello = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50 };

const fakeMethod = () =>
  Method.toClient(fakeCharge, {
    createCredential: async ({ challenge }) => Credential.serialize(Credential.from({ challenge, payload: { token: 'test-token' } })),
  });

async function legacyClient() {
  const client = new LegacyClient({ name: 'mpp-agent', version: '1.0.0' });
  await client.connect(new LegacyTransport(endpoint()));
  return client;
}

describe('paying for a tool call over MPP', () => {
  it('offers the MPP challenge beside the x402 one', async () => {
    const client = new ModernClient({ name: 'plain-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernTransport(endpoint()));
    const result: any = await client.callTool({ name: 'chat', arguments: hello });
    await client.close();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ x402Version: 2, accepts: [{ scheme: 'exact', amount: '10000' }] });
    const required = result._meta['org.paymentauth/payment-required'];
    expect(required.httpStatus).toBe(402);
    expect(required.challenges).toHaveLength(1);
    expect(required.challenges[0]).toMatchObject({ method: 'fake', intent: 'charge', realm: 'sluice.test', request: { amount: '0.01', currency: 'usd' } });
  });

  it('an mppx MCP client pays, is served and credited once; the credential replayed is payment_consumed', async () => {
    const client = await legacyClient();
    const sent: Array<{ _meta?: Record<string, unknown> }> = [];
    const original = client.callTool.bind(client);
    client.callTool = ((params: Parameters<typeof original>[0], ...rest: unknown[]) => {
      sent.push(params);
      return (original as (...args: unknown[]) => ReturnType<typeof original>)(params, ...rest);
    }) as typeof client.callTool;
    McpClient.wrap(client, { methods: [fakeMethod()] });

    const before = (await ledger()).length;
    const paid: any = await client.callTool({ name: 'chat', arguments: hello });
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ object: 'chat.completion', model: 'gpt-oss-120b' });
    // The unpaid call, then the retry with the credential.
    expect(sent).toHaveLength(2);
    const credential = sent[1]!._meta!['org.paymentauth/credential'] as { challenge: { id: string } };
    expect(paid.receipt).toMatchObject({ method: 'fake', status: 'success', reference: `fake_${credential.challenge.id}`, challengeId: credential.challenge.id });
    expect(paid._meta['org.paymentauth/receipt']).toEqual(paid.receipt);
    const receipt: string = paid._meta['sluice/receipt'];
    expect(receipt).toMatch(/^rcpt_/);

    const rows = (await ledger()).slice(before);
    expect(rows.map((r) => r.kind)).toEqual(['purchase', 'draw']);
    expect(rows[0]).toMatchObject({ rail: 'mpp', holder_kind: 'receipt', holder_id: receiptHash(receipt) });
    expect(Number(rows[0]!.amount_micros)).toBe(10_000);

    // The same credential again, from a client that does not pay by itself.
    const plain = await legacyClient();
    const replay: any = await plain.callTool({ name: 'chat', arguments: hello, _meta: { 'org.paymentauth/credential': credential } });
    expect(replay.isError).toBe(true);
    expect(replay.structuredContent).toMatchObject({ status: 402, error: { code: 'payment_consumed' } });
    expect((await ledger()).length).toBe(before + 2);
    await plain.close();
    await client.close();
  });

  it('refuses a credential that is not one, and credits nothing', async () => {
    const client = await legacyClient();
    const before = (await ledger()).length;
    const result: any = await client.callTool({ name: 'chat', arguments: hello, _meta: { 'org.paymentauth/credential': { hello: 'world' } } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      status: 400,
      error: {
        message: '_meta["org.paymentauth/credential"] is not an MPP credential',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: '_meta.org.paymentauth/credential',
      },
    });
    expect((await ledger()).length).toBe(before);
    await client.close();
  });
});
