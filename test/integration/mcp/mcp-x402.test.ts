/**
 * A tool call paid per call over x402 (the MCP transport, v2) with no credential: the call
 * answers the x402 PaymentRequired as an isError result; a client that signs a real
 * EIP-3009 authorization (viem) and retries with `_meta["x402/payment"]` is served, the
 * loopback facilitator verified and settled it, the answer carries
 * `_meta["x402/payment-response"]`, and the storefront ledger shows one purchase and one
 * draw. Replaying the same payment credits nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { receiptHash } from '../../../src/domain/storefront/receipts.js';
import { storefrontProjectId } from '../../../src/domain/storefront/sellers.js';
import { PAY_TO, startStorefront, type StorefrontEnv } from '../storefront/support.js';

let env: StorefrontEnv;
beforeAll(async () => {
  env = await startStorefront();
});
afterAll(async () => env?.close());

async function connect() {
  const client = new Client({ name: 'paying-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${env.server.baseUrl}/mcp`)));
  return client;
}

const ledger = () =>
  env.server.core.database.db.selectFrom('storefront_ledger').select(['kind', 'amount_micros', 'rail', 'holder_kind', 'holder_id']).orderBy('created_at').orderBy('kind', 'desc').execute();

const hello = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50 };

describe('paying for a tool call over x402', () => {
  it('quotes, is paid with a signed EIP-3009 authorization, serves the call, and credits a replay nothing', async () => {
    const client = await connect();
    const challenge: any = await client.callTool({ name: 'chat', arguments: hello });
    expect(challenge.isError).toBe(true);
    const required = challenge.structuredContent;
    expect(required).toMatchObject({
      x402Version: 2,
      resource: { url: `${env.server.baseUrl}/mcp#chat`, mimeType: 'application/json' },
      accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '10000', payTo: PAY_TO, maxTimeoutSeconds: 300 }],
    });
    expect(JSON.parse(challenge.content[0].text)).toEqual(required);
    expect(await ledger()).toEqual([]);

    const account = privateKeyToAccount(generatePrivateKey());
    const payer = new x402Client().register('eip155:*', new ExactEvmScheme(account));
    const payment = await payer.createPaymentPayload(required);
    const paid: any = await client.callTool({ name: 'chat', arguments: hello, _meta: { 'x402/payment': payment } });
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ object: 'chat.completion', model: 'gpt-oss-120b' });
    expect(paid._meta['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:84532', payer: account.address });
    const receipt: string = paid._meta['sluice/receipt'];
    expect(receipt).toMatch(/^rcpt_/);

    // One purchase of the quote, one draw of the call, both on the receipt.
    const rows = await ledger();
    expect(rows.map((r) => r.kind)).toEqual(['purchase', 'draw']);
    expect(Number(rows[0]!.amount_micros)).toBe(10_000);
    expect(rows[0]).toMatchObject({ rail: 'x402', holder_kind: 'receipt', holder_id: receiptHash(receipt) });
    expect(rows[1]).toMatchObject({ holder_kind: 'receipt', holder_id: receiptHash(receipt) });
    expect(Number(rows[1]!.amount_micros)).toBeLessThan(0);
    const [usage] = (await env.server.core.repositories.usage.listByProject(storefrontProjectId('sluice'), 10)).items;
    expect(usage).toMatchObject({ route: 'mcp/chat', payer: { kind: 'receipt', id: receiptHash(receipt) } });
    // The quote and the paid call are one entry each of the request log, in the seller's project.
    await env.server.features.requestLog.services.writer.flush();
    const logged = await env.server.core.database.db.selectFrom('request_log').selectAll().where('project_id', '=', storefrontProjectId('sluice')).orderBy('status').execute();
    expect(logged.map((e) => [e.route, e.wire, e.scope, e.status, e.error_code, Number(e.cost_micros)])).toEqual([
      ['mcp/chat', 'mcp', 'mcp', 200, null, usage!.costMicros],
      ['mcp/chat', 'mcp', 'mcp', 402, 'payment_required', 0],
    ]);
    expect(logged[0]!.id).toBe(usage!.requestId);

    const replay: any = await client.callTool({ name: 'chat', arguments: hello, _meta: { 'x402/payment': payment } });
    expect(replay.isError).toBe(true);
    expect(replay.structuredContent).toMatchObject({ status: 402, error: { code: 'payment_consumed' } });
    expect((await ledger()).length).toBe(2);
    await client.close();
  });

  it('answers a payment the facilitator refuses with the storefront code, and credits nothing', async () => {
    const client = await connect();
    const args = { ...hello, messages: [{ role: 'user', content: 'Refused' }] };
    const challenge: any = await client.callTool({ name: 'chat', arguments: args });
    const payer = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())));
    const payment = await payer.createPaymentPayload(challenge.structuredContent);
    const before = (await ledger()).length;
    env.facilitator.mode = 'verify-invalid';
    try {
      const refused: any = await client.callTool({ name: 'chat', arguments: args, _meta: { 'x402/payment': payment } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ status: 402, error: { code: 'settlement_failed' } });
    } finally {
      env.facilitator.mode = 'ok';
    }
    expect((await ledger()).length).toBe(before);
    await client.close();
  });

  it('refuses a call the service refuses before quoting anything, with the REST code', async () => {
    const client = await connect();
    const before = (await ledger()).length;
    const result: any = await client.callTool({ name: 'chat', arguments: { model: 'gpt-oss-120b', messages: [] } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      status: 400,
      error: { message: 'messages must be a non-empty array', type: 'invalid_request_error', code: 'invalid_request_error', param: 'messages' },
    });
    const unknown: any = await client.callTool({ name: 'chat', arguments: { ...hello, model: 'no-such-model' } });
    expect(unknown.structuredContent).toMatchObject({ status: 400, error: { code: 'model_not_found', param: 'model' } });
    expect((await ledger()).length).toBe(before);
    await client.close();
  });

  it('quotes the worst case of the call: a larger output cap costs more', async () => {
    const client = await connect();
    const big: any = await client.callTool({ name: 'chat', arguments: { ...hello, max_tokens: 20_000 } });
    // 20,000 output tokens at $2/M is 40,000 micro-dollars, with the input's bound on top: 5 cents.
    expect(big.structuredContent.accepts[0].amount).toBe('50000');
    await client.close();
  });

  it('refuses a payment payload that is not one, and credits nothing', async () => {
    const client = await connect();
    const before = (await ledger()).length;
    const result: any = await client.callTool({ name: 'chat', arguments: hello, _meta: { 'x402/payment': { hello: 'world' } } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 400, error: { code: 'invalid_request', message: 'PAYMENT-SIGNATURE is not an x402 v2 payment payload' } });
    expect((await ledger()).length).toBe(before);
    await client.close();
  });

  it('still needs a credential for the batch tools', async () => {
    const client = await connect();
    const result: any = await client.callTool({ name: 'batch_get', arguments: { batch_id: 'batch_x' } });
    expect(result.structuredContent).toMatchObject({ status: 401, error: { code: 'missing_api_key' } });
    await client.close();
  });
});
