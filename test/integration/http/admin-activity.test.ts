/**
 * The admin API's activity routes (read by the console's Gateway, Storefront and Models
 * pages): settlement messages of every state with their delivery state, filtered and a
 * page at a time; storefront purchases and accounts (agents' and receipts', a receipt by
 * its stored hash only); the same routes for an operator's console session and none for a
 * developer's; and the catalog naming an upstream that does not answer. Runs on
 * PostgreSQL too with SLUICE_TEST_HTTP_ON_POSTGRES=1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
import { receiptHash } from '../../../src/domain/storefront/receipts.js';
import type { CreditMovement } from '../../../src/domain/storefront/storefront.types.js';
import { StorefrontRepository } from '../../../src/storage/db/repositories/storefront.repository.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { refusedPort } from '../../helpers/refused-port.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const get = (path: string, headers: Record<string, string> = admin) => call(server.baseUrl, 'GET', path, { headers });

let server: TestServer;
let upstream: FakeUpstream;
/** Outbox ids in the order written (oldest first). */
const outboxIds: string[] = [];
/** When the deliverer's store calls ran (ms); a delivered time is this plus the delay each was given. */
let deliveredFrom = 0;
const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const RECEIPT = 'rcpt_AAAAAAAAAAAAAAAAAAAAAA';

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const yaml = `models:\n  up-model:\n    base_url: ${upstream.baseUrl}\n  down-model:\n    base_url: http://127.0.0.1:${await refusedPort()}/v1\n`;
  server = await startTestServer({ yaml });
  const { billing, outbox } = server.core;
  const tenant = await server.newTenant();
  const record = () => billing.usageRecord(apiKeyPrincipal(tenant.projectId, tenant.keyId), { model: 'm', route: 'r', requestId: 'req_act', inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 1, outputTokens: 1, status: 200 });
  const report = (key: string) => ({ calls: [{ key, requestId: key, agentId: 'agt_1', service: 'm', timestamp: '2026-01-01T00:00:00.000Z', usage: { input_tokens: 11 } }] });
  // One write each, awaited: messages of one kind written in one transaction would be one entry.
  for (const [targetKind, key, payload] of [
    ['intermediary', 'gwreq_a', report('gwreq_a')],
    ['intermediary', 'gwreq_b', report('gwreq_b')],
    ['intermediary', 'gwreq_c', report('gwreq_c')],
    ['other', 'other_d', { n: 1 }],
  ] as const) {
    await billing.write(record(), { outbox: [{ targetKind, idempotencyKey: key, payload }] });
  }
  // Delivery states set by the deliverer's own store calls: a delivered, b dead, c retrying, d untouched.
  const now = Date.now();
  deliveredFrom = now;
  const claimed = await outbox.repository.claimDue('test-owner', now, 60_000, 10);
  const byKey = new Map(claimed.map((e) => [e.idempotencyKey, e.id]));
  outboxIds.push(...['gwreq_a', 'gwreq_b', 'gwreq_c', 'other_d'].map((k) => byKey.get(k)!));
  await outbox.repository.markDelivered(byKey.get('gwreq_a')!, 'test-owner', now + 1000);
  await outbox.repository.markDead(byKey.get('gwreq_b')!, 'test-owner', 'IntermediaryError: the intermediary answered 422');
  await outbox.repository.reschedule(byKey.get('gwreq_c')!, 'test-owner', now + 60_000, 'IntermediaryError: the intermediary answered 500');
  await outbox.repository.markDelivered(byKey.get('other_d')!, 'nobody', now);

  const store = new StorefrontRepository(server.core.database);
  const movement = (n: number, holder: CreditMovement['holder'], rail: CreditMovement['rail'], amountMicros: number, paymentRef: string, detail: string | null): CreditMovement => ({
    id: `mov_0${n}`, sellerId: 'sluice', holder, kind: 'purchase', amountMicros, paymentRef, rail, detail, createdAtMs: T0 + n * 1000,
  });
  await store.purchase(movement(1, { kind: 'agent', agentId: 'agt_alpha' }, 'x402', 1_000_000, 'x402:eip155:84532:0xabc', '0xtx1'));
  await store.purchase(movement(2, { kind: 'receipt', receiptId: receiptHash(RECEIPT) }, 'mpp', 250_000, 'mpp:ch_1', null));
  await store.purchase(movement(3, { kind: 'agent', agentId: 'agt_beta' }, 'card', 5_000_000, 'card:chk_1', null));
  await store.purchase(movement(4, { kind: 'agent', agentId: 'agt_alpha' }, 'x402', 500_000, 'x402:eip155:84532:0xdef', '0xtx2'));
  await store.draw({ id: 'mov_05', sellerId: 'sluice', holder: { kind: 'agent', agentId: 'agt_alpha' }, kind: 'draw', amountMicros: -200_000, paymentRef: null, rail: null, detail: 'req_x', createdAtMs: T0 + 5000 });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe('GET /admin/v1/outbox', () => {
  it('lists messages of every state, newest first, with their delivery state', async () => {
    const res = await get('/admin/v1/outbox');
    expect(res.status).toBe(200);
    const [a, b, c, d] = outboxIds;
    expect(res.body).toMatchObject({ object: 'list', first_id: d, last_id: a, has_more: false });
    expect(res.body.data.map((m: any) => [m.id, m.state, m.attempts])).toEqual([
      [d, 'pending', 1],
      [c, 'pending', 1],
      [b, 'dead', 1],
      [a, 'delivered', 1],
    ]);
    const dead = res.body.data[2];
    expect(dead).toEqual({
      id: b,
      object: 'outbox_message',
      target_kind: 'intermediary',
      idempotency_key: 'gwreq_b',
      payload: { calls: [{ key: 'gwreq_b', requestId: 'gwreq_b', agentId: 'agt_1', service: 'm', timestamp: '2026-01-01T00:00:00.000Z', usage: { input_tokens: 11 } }] },
      state: 'dead',
      attempts: 1,
      last_error: 'IntermediaryError: the intermediary answered 422',
      next_attempt_at: expect.any(Number),
      created_at: expect.any(Number),
      delivered_at: null,
    });
    expect(res.body.data[1].last_error).toBe('IntermediaryError: the intermediary answered 500');
    expect(res.body.data[3].delivered_at).toBe(Math.floor((deliveredFrom + 1000) / 1000));
  });

  it('filters by state and target kind, and pages with limit and after', async () => {
    const [a, b, c, d] = outboxIds;
    expect((await get('/admin/v1/outbox?state=dead')).body.data.map((m: any) => m.id)).toEqual([b]);
    expect((await get('/admin/v1/outbox?state=pending&target_kind=intermediary')).body.data.map((m: any) => m.id)).toEqual([c]);
    expect((await get('/admin/v1/outbox?target_kind=nothing')).body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    const first = await get('/admin/v1/outbox?limit=3');
    expect(first.body).toMatchObject({ first_id: d, last_id: b, has_more: true });
    const second = await get(`/admin/v1/outbox?limit=3&after=${first.body.last_id}`);
    expect(second.body).toMatchObject({ data: [expect.objectContaining({ id: a })], has_more: false });
  });

  it('refuses a state it does not know, and a bad limit', async () => {
    const res = await get('/admin/v1/outbox?state=lost');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'state must be one of pending, delivered, dead', code: 'invalid_state', param: 'state' });
    const limit = await get('/admin/v1/outbox?limit=0');
    expect(limit.status).toBe(400);
    expect(limit.body.error).toMatchObject({ code: 'invalid_limit', message: 'limit must be an integer between 1 and 100' });
    expect((await get('/admin/v1/outbox', {})).status).toBe(401);
  });
});

describe('GET /admin/v1/storefront/purchases', () => {
  it('lists purchase movements only, newest first, in USD, the payment reference as stored and a receipt by its hash', async () => {
    const res = await get('/admin/v1/storefront/purchases');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [
        { id: 'mov_04', object: 'storefront_purchase', seller_id: 'sluice', holder: { kind: 'agent', id: 'agt_alpha' }, rail: 'x402', amount_usd: 0.5, payment_ref: 'x402:eip155:84532:0xdef', detail: '0xtx2', created_at: T0 / 1000 + 4 },
        { id: 'mov_03', object: 'storefront_purchase', seller_id: 'sluice', holder: { kind: 'agent', id: 'agt_beta' }, rail: 'card', amount_usd: 5, payment_ref: 'card:chk_1', detail: null, created_at: T0 / 1000 + 3 },
        { id: 'mov_02', object: 'storefront_purchase', seller_id: 'sluice', holder: { kind: 'receipt', id: receiptHash(RECEIPT) }, rail: 'mpp', amount_usd: 0.25, payment_ref: 'mpp:ch_1', detail: null, created_at: T0 / 1000 + 2 },
        { id: 'mov_01', object: 'storefront_purchase', seller_id: 'sluice', holder: { kind: 'agent', id: 'agt_alpha' }, rail: 'x402', amount_usd: 1, payment_ref: 'x402:eip155:84532:0xabc', detail: '0xtx1', created_at: T0 / 1000 + 1 },
      ],
      first_id: 'mov_04',
      last_id: 'mov_01',
      has_more: false,
    });
    expect(JSON.stringify(res.body)).not.toContain(RECEIPT);
  });

  it('filters by rail and pages', async () => {
    expect((await get('/admin/v1/storefront/purchases?rail=x402')).body.data.map((p: any) => p.id)).toEqual(['mov_04', 'mov_01']);
    const first = await get('/admin/v1/storefront/purchases?limit=2');
    expect(first.body).toMatchObject({ first_id: 'mov_04', last_id: 'mov_03', has_more: true });
    const second = await get('/admin/v1/storefront/purchases?limit=2&after=mov_03');
    expect(second.body).toMatchObject({ first_id: 'mov_02', last_id: 'mov_01', has_more: false });
    const bad = await get('/admin/v1/storefront/purchases?rail=cash');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ message: 'rail must be one of x402, mpp, card', code: 'invalid_rail', param: 'rail' });
  });
});

describe('GET /admin/v1/storefront/accounts', () => {
  it("lists agents' and receipts' accounts, newest first, with balance, purchased and consumed", async () => {
    const res = await get('/admin/v1/storefront/accounts');
    expect(res.status).toBe(200);
    const ids = res.body.data.map((a: any) => a.id);
    expect(res.body).toEqual({
      object: 'list',
      data: [
        { id: ids[0], object: 'storefront_account', seller_id: 'sluice', holder: { kind: 'agent', id: 'agt_beta' }, balance_usd: 5, purchased_usd: 5, consumed_usd: 0, status: 'active', created_at: T0 / 1000 + 3, updated_at: T0 / 1000 + 3 },
        { id: ids[1], object: 'storefront_account', seller_id: 'sluice', holder: { kind: 'receipt', id: receiptHash(RECEIPT) }, balance_usd: 0.25, purchased_usd: 0.25, consumed_usd: 0, status: 'active', created_at: T0 / 1000 + 2, updated_at: T0 / 1000 + 2 },
        { id: ids[2], object: 'storefront_account', seller_id: 'sluice', holder: { kind: 'agent', id: 'agt_alpha' }, balance_usd: 1.3, purchased_usd: 1.5, consumed_usd: 0.2, status: 'active', created_at: T0 / 1000 + 1, updated_at: T0 / 1000 + 5 },
      ],
      first_id: ids[0],
      last_id: ids[2],
      has_more: false,
    });
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('filters by holder kind, pages with the last id as after, and refuses an id it did not hand out', async () => {
    const receipts = await get('/admin/v1/storefront/accounts?holder_kind=receipt');
    expect(receipts.body.data.map((a: any) => a.holder)).toEqual([{ kind: 'receipt', id: receiptHash(RECEIPT) }]);
    const agents = await get('/admin/v1/storefront/accounts?holder_kind=agent&limit=1');
    expect(agents.body).toMatchObject({ data: [expect.objectContaining({ holder: { kind: 'agent', id: 'agt_beta' } })], has_more: true });
    const next = await get(`/admin/v1/storefront/accounts?holder_kind=agent&limit=1&after=${agents.body.last_id}`);
    expect(next.body).toMatchObject({ data: [expect.objectContaining({ holder: { kind: 'agent', id: 'agt_alpha' } })], has_more: false });
    const bad = await get('/admin/v1/storefront/accounts?after=mov_01');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ message: 'after must be the id of an account of this list', code: 'invalid_cursor', param: 'after' });
    const kind = await get('/admin/v1/storefront/accounts?holder_kind=project');
    expect(kind.body.error).toMatchObject({ message: 'holder_kind must be one of agent, receipt', code: 'invalid_holder_kind' });
  });
});

describe('the same routes in the console', () => {
  async function session(credential: string): Promise<Record<string, string>> {
    const res = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential } });
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]! };
  }

  it("an operator's session reads them; a developer's is refused; no session is 401", async () => {
    const operator = await session(ADMIN_TOKEN);
    for (const path of ['/outbox?state=dead', '/storefront/purchases', '/storefront/accounts']) {
      const viaConsole = await get(`/console/api/admin${path}`, operator);
      expect(viaConsole.status).toBe(200);
      expect(viaConsole.body).toEqual((await get(`/admin/v1${path}`)).body);
    }
    const developer = await session((await server.newTenant()).key);
    for (const path of ['/outbox', '/storefront/purchases', '/storefront/accounts']) {
      const refused = await get(`/console/api/admin${path}`, developer);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'operator_required', message: 'This needs an operator session (signed in with the admin token, or as an operator)' });
      expect((await get(`/console/api/admin${path}`, {})).status).toBe(401);
    }
  });
});

describe('GET /v1/catalog', () => {
  it('names an upstream model whose engine does not answer: unreachable since when, and why', async () => {
    const { key } = await server.newTenant();
    const res = await call(server.baseUrl, 'GET', '/v1/catalog', { key });
    expect(res.status).toBe(200);
    const byId = new Map(res.body.data.map((m: any) => [m.id, m]));
    expect(byId.get('up-model')).toMatchObject({ upstream: true, ready: true, unreachable_since: null, unreachable_reason: null });
    expect(byId.get('down-model')).toMatchObject({ upstream: true, ready: true, unreachable_since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), unreachable_reason: 'ECONNREFUSED' });
    expect(byId.get('all-minilm-l6-v2')).toMatchObject({ upstream: false, unreachable_since: null, unreachable_reason: null });
    const model = await call(server.baseUrl, 'GET', '/v1/models/down-model', { key });
    expect(model.body.unreachable_since).toBe((byId.get('down-model') as any).unreachable_since);
  });
});
