/**
 * Storefront calls' usage records (issue #21): a chat call paid by an agent's Credits or
 * by a receipt leaves exactly one usage record, under the seller's tenant project, with
 * that payer, listed by the admin usage route; the ledger draw goes with it and no /v1
 * project's balance moves. On SQLite and, when reachable, on PostgreSQL. And a call with
 * no max_tokens on low credit is served with a lowered output cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startStorefront, type StorefrontEnv } from './support.js';
import { newReceiptId, receiptHash } from '../../../src/domain/storefront/receipts.js';
import { isUuid, newId } from '../../../src/domain/shared/ids.js';
import { storefrontProjectId } from '../../../src/domain/storefront/sellers.js';
import { postgresReachable, postgresSchema } from '../../helpers/databases.js';
import { ADMIN_TOKEN, call } from '../../helpers/harness.js';

const CHAT = '/gateway/v1/chat/completions';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const body = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }], ...extra });
const TENANT = storefrontProjectId('sluice');

async function credit(env: StorefrontEnv, holder: { kind: 'agent'; agentId: string } | { kind: 'receipt'; receiptId: string }, micros: number) {
  await env.server.features.storefront.services!.store.purchase({
    id: newId('mov_'), sellerId: 'sluice', holder, kind: 'purchase', amountMicros: micros,
    paymentRef: `test:${newId('ref_')}`, rail: 'x402', detail: null, createdAtMs: Date.now(),
  });
}

async function usageOf(env: StorefrontEnv, projectId: string): Promise<any[]> {
  const listed = await call(env.server.baseUrl, 'GET', `/admin/v1/projects/${encodeURIComponent(projectId)}/usage?limit=100`, { headers: admin });
  expect(listed.status).toBe(200);
  return listed.body.data;
}

const flavors = [
  { name: 'SQLite', env: async () => ({ env: {}, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    env: async () => {
      if (!(await postgresReachable())) return null;
      const schema = await postgresSchema();
      return { env: { DATABASE_URL: schema.url }, drop: schema.drop };
    },
  },
];

describe.each(flavors)('storefront usage records on $name', (flavor) => {
  let env: StorefrontEnv | undefined;
  let drop = async () => {};
  let projectId = '';
  beforeAll(async () => {
    const setup = await flavor.env();
    if (!setup) return;
    drop = setup.drop;
    env = await startStorefront({ agents: 1, env: { RATE_LIMIT_RPM: '1000', ...setup.env } });
    const project = await call(env.server.baseUrl, 'POST', '/admin/v1/projects', { headers: admin, body: { name: 'v1 tenant' } });
    expect(project.status).toBe(200);
    projectId = project.body.id;
  });
  afterAll(async () => {
    await env?.close();
    await drop();
  });

  it('a call by bearer and one by receipt each leave one record with their payer, and no /v1 balance moves', async (ctx) => {
    if (!env) return ctx.skip();
    const before = await env.server.core.repositories.projects.findById(projectId);
    const agent = env.agents[0]!;
    await credit(env, { kind: 'agent', agentId: agent.id }, 1_000_000);
    const receipt = newReceiptId();
    await credit(env, { kind: 'receipt', receiptId: receiptHash(receipt) }, 10_000);

    const byBearer = await post(env, CHAT, body({ max_tokens: 16 }), { authorization: `Bearer ${await env.tokenOf(agent)}` });
    expect(byBearer.status).toBe(200);
    const byReceipt = await post(env, CHAT, body({ max_tokens: 16 }), { authorization: `Receipt ${receipt}` });
    expect(byReceipt.status).toBe(200);
    expect(byReceipt.headers.get('x-credit-remaining-usd')).toBe('0.009975');

    const records = await usageOf(env, TENANT);
    expect(isUuid(TENANT)).toBe(true);
    expect(records).toHaveLength(2);
    const byPayer = new Map(records.map((r) => [r.payer.kind, r]));
    // 11 input tokens at $1/M and 7 output tokens at $2/M: 25 micro-dollars each.
    expect(byPayer.get('agent')).toMatchObject({
      object: 'usage_record', project_id: TENANT, key_id: null, payer: { kind: 'agent', id: agent.id },
      model: 'gpt-oss-120b', input_tokens: 11, output_tokens: 7, cost_usd: 0.000025, status: 200,
      request_id: byBearer.headers.get('x-request-id'),
    });
    expect(byPayer.get('receipt')).toMatchObject({
      project_id: TENANT, payer: { kind: 'receipt', id: receiptHash(receipt) }, cost_usd: 0.000025,
      request_id: byReceipt.headers.get('x-request-id'),
    });

    // The draw went with the record: one ledger movement each, and the balances are the ledger's.
    const store = env.server.features.storefront.services!.store;
    const agentMoves = await store.movements('sluice', { kind: 'agent', agentId: agent.id });
    expect(agentMoves.map((m) => [m.kind, m.amountMicros])).toEqual([['purchase', 1_000_000], ['draw', -25]]);
    expect(await store.account('sluice', { kind: 'agent', agentId: agent.id })).toMatchObject({ balanceMicros: 1_000_000 - 25, consumedMicros: 25 });
    expect((await store.account('sluice', { kind: 'receipt', receiptId: receiptHash(receipt) }))!.balanceMicros).toBe(10_000 - 25);

    // No /v1 project pays: its balance and usage are untouched, and the tenant project holds no credit.
    expect(await env.server.core.repositories.projects.findById(projectId)).toEqual(before);
    expect(await usageOf(env, projectId)).toEqual([]);
    expect((await env.server.core.repositories.projects.findById(TENANT))!.balanceMicros).toBe(0);
  });

  it('a call without max_tokens on low credit is served with a lowered output cap', async (ctx) => {
    if (!env) return ctx.skip();
    const receipt = newReceiptId();
    await credit(env, { kind: 'receipt', receiptId: receiptHash(receipt) }, 100);
    env.upstream.reset();
    const answer = await post(env, CHAT, body(), { authorization: `Receipt ${receipt}` });
    expect(answer.status).toBe(200);
    const cap = Number(answer.headers.get('x-sluice-output-cap-lowered'));
    expect(Number.isInteger(cap) && cap >= 1).toBe(true);
    // The upstream was asked for no more than the credit covers (100 micros at $2/M output, less the input).
    expect(env.upstream.requests[0]!.body.max_tokens).toBe(cap);
    expect(cap).toBeLessThan(50);
    const records = (await usageOf(env, TENANT)).filter((r) => r.payer.id === receiptHash(receipt));
    expect(records).toHaveLength(1);
  });
});
