/**
 * Allowance and settlement on the gateway: a deny is a 402 passing the intermediary's
 * `payment_required` through with no inference; an outage (500, reset, malformed, slow)
 * fails open and is counted; refused credentials fail closed; `gw-usage` equals what is
 * settled; reports are retried until accepted once; dead letters are listed and replayed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call } from '../../helpers/harness.js';
import { signedCall, startGatewayEnv, type GatewayEnv } from './setup.js';

const CHAT = '/gateway/v1/chat/completions';
const chatBody = (max?: number) => ({
  model: 'gpt-oss-120b',
  messages: [{ role: 'user', content: 'Hello there' }],
  ...(max === undefined ? {} : { max_tokens: max }),
});

let env: GatewayEnv;
beforeAll(async () => {
  env = await startGatewayEnv({ yamlTail: 'outbox:\n  max_attempts: 3\n' });
});
afterAll(() => env.close());
beforeEach(async () => {
  // The last test's settlements go out within the deliverer's coalescing delay: let them,
  // so each test sees only its own reports.
  for (let i = 0; i < 100; i++) {
    const pending = await env.server.core.database.db.selectFrom('outbox').select('id').where('state', '=', 'pending').execute();
    if (pending.length === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  env.upstream.reset();
  env.intermediary.reset();
});

async function counter(name: string, label: string): Promise<number> {
  const text = await (await fetch(`${env.server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${label}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

const admin = (method: string, path: string) => call(env.server.baseUrl, method, path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

describe('allowance check', () => {
  it('asks with the service slug and estimates: the input bound and the output cap', async () => {
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(64), { agentId: 'agt_est', requestId: 'gwreq_est' });
    expect(answer.status).toBe(200);
    expect(env.intermediary.checks).toHaveLength(1);
    const check = env.intermediary.checks[0];
    expect(check).toMatchObject({ requestId: 'gwreq_est', agentId: 'agt_est', service: 'gpt-oss-120b' });
    expect(check.usage[0].meter).toBe('input_tokens');
    expect(check.usage[0].quantity).toBeGreaterThanOrEqual(11);
    expect(check.usage[1]).toEqual({ meter: 'output_tokens', quantity: 64 });
  });

  it('a deny is 402 with the payment_required body, and nothing runs', async () => {
    env.intermediary.check('agt_broke', { kind: 'deny', reason: 'usage_exhausted' });
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(32), { agentId: 'agt_broke' });
    expect(answer.status).toBe(402);
    const estimate = env.intermediary.checks[0].usage;
    expect(answer.body).toEqual({
      error: 'payment_required',
      serviceSlug: 'gpt-oss-120b',
      reason: 'usage_exhausted',
      usage: [
        { meterSlug: 'input_tokens', quantity: estimate[0].quantity },
        { meterSlug: 'output_tokens', quantity: 32 },
      ],
    });
    expect(answer.headers.get('gw-usage')).toBeNull();
    expect(env.upstream.count('/chat/completions')).toBe(0);
  });

  it.each([
    ['a 500', { kind: 'status', status: 500 }],
    ['a 429', { kind: 'status', status: 429 }],
    ['a connection reset', { kind: 'reset' }],
    ['a malformed answer', { kind: 'malformed' }],
    ['an answer slower than GATEWAY_CHECK_TIMEOUT_MS', { kind: 'delay', ms: 3_000 }],
  ] as const)('%s fails open: served, counted', async (_name, behavior) => {
    const before = await counter('sluice_gateway_allowance_checks_total', 'outcome="unavailable"');
    env.intermediary.check('agt_outage', behavior);
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { agentId: 'agt_outage' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('gw-usage')).toBe('input_tokens=11, output_tokens=7');
    expect(await counter('sluice_gateway_allowance_checks_total', 'outcome="unavailable"')).toBe(before + 1);
  });

  it('refused read credentials (401 from the intermediary) fail closed: 503, nothing runs', async () => {
    env.intermediary.check('agt_cred', { kind: 'status', status: 401 });
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { agentId: 'agt_cred' });
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ error: 'allowance_unavailable' });
    expect(env.upstream.count('/chat/completions')).toBe(0);
  });

  it('an invalid body is 400 before any allowance check', async () => {
    const answer = await signedCall(env.server.baseUrl, CHAT, { model: 'gpt-oss-120b' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.param).toBe('messages');
    expect(env.intermediary.checks).toHaveLength(0);
  });

  it('an embedding model the gateway does not serve is 400 model_not_found; other routes refuse embedding models too', async () => {
    const answer = await signedCall(env.server.baseUrl, '/gateway/v1/embeddings', { model: 'gpt-oss-120b', input: 'x' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const onChat = await signedCall(env.server.baseUrl, CHAT, { model: 'all-minilm-l6-v2', messages: [{ role: 'user', content: 'x' }] });
    expect(onChat.status).toBe(400);
    expect(onChat.body.error.code).toBe('model_not_found');
    expect(env.intermediary.checks).toHaveLength(0);
  });
});

describe('settlement', () => {
  it('gw-usage equals the reported usage; the record is under the gateway tenant, paid by the intermediary, at no cost', async () => {
    env.upstream.chat({ usage: { prompt_tokens: 23, completion_tokens: 9 } });
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { agentId: 'agt_settle', requestId: 'gwreq_settle' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('gw-usage')).toBe('input_tokens=23, output_tokens=9');
    await env.intermediary.waitForAccepted(2);
    const events = [...env.intermediary.accepted.values()];
    expect(events.map((e) => [e.meter, e.quantity, e.idempotencyKey])).toEqual([
      ['input_tokens', 23, 'gwreq_settle:input_tokens'],
      ['output_tokens', 9, 'gwreq_settle:output_tokens'],
    ]);
    expect(events[0]).toMatchObject({ requestId: 'gwreq_settle', agentId: 'agt_settle', service: 'gpt-oss-120b' });
    const usage = await env.server.core.repositories.usage.listByProject(env.server.features.gateway.services.tenantProjectId, 10);
    const record = usage.items.find((r) => r.inputTokens === 23)!;
    expect(record).toMatchObject({ route: CHAT, outputTokens: 9, costMicros: 0, keyId: null });
  });

  it('embeddings settle input tokens only', async () => {
    const answer = await signedCall(env.server.baseUrl, '/gateway/v1/embeddings', { model: 'bge-small-en-v1.5', input: ['a b', 'c'] }, { requestId: 'gwreq_emb' });
    expect(answer.status).toBe(200);
    const header = answer.headers.get('gw-usage')!;
    expect(header).toBe(`input_tokens=${answer.body.usage.prompt_tokens}`);
    await env.intermediary.waitForAccepted(1);
    expect([...env.intermediary.accepted.keys()]).toEqual(['gwreq_emb:input_tokens']);
  });

  it('a usage message in the older form (its events listed, as written before the call’s usage was kept once) is reported as written', async () => {
    const { billing } = env.server.core;
    const gateway = env.server.features.gateway.services;
    const principal = { kind: 'gateway_agent' as const, projectId: gateway.tenantProjectId, keyId: null, subject: 'agt_old', payer: { kind: 'intermediary' as const, intermediaryId: 'default' } };
    const record = billing.usageRecord(principal, { model: 'gpt-oss-120b', route: CHAT, requestId: 'req_old', inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 4, outputTokens: 2, status: 200 });
    const event = (meter: string, quantity: number) => ({ requestId: 'gwreq_old', agentId: 'agt_old', service: 'gpt-oss-120b', meter, quantity, timestamp: '2026-01-01T00:00:00.000Z', idempotencyKey: `gwreq_old:${meter}` });
    const events = [event('input_tokens', 4), event('output_tokens', 2)];
    await billing.write(record, { outbox: [{ targetKind: 'intermediary', idempotencyKey: 'gwreq_old', payload: { events } }] });
    await env.intermediary.waitForAccepted(2);
    expect([...env.intermediary.accepted.values()]).toEqual(events);
  });

  it('the calls one transaction settles share one outbox entry, and each call’s events are reported once', async () => {
    const { billing, database } = env.server.core;
    const gateway = env.server.features.gateway.services;
    const principal = { kind: 'gateway_agent' as const, projectId: gateway.tenantProjectId, keyId: null, subject: 'agt_tx', payer: { kind: 'intermediary' as const, intermediaryId: 'default' } };
    const settle = (i: number) => {
      const record = billing.usageRecord(principal, { model: 'gpt-oss-120b', route: CHAT, requestId: `req_tx${i}`, inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 10 + i, outputTokens: i, status: 200 });
      const call = { key: `gwreq_tx${i}`, requestId: `gwreq_tx${i}`, agentId: 'agt_tx', service: 'gpt-oss-120b', timestamp: '2026-01-01T00:00:00.000Z', usage: { input_tokens: 10 + i, output_tokens: i } };
      return billing.write(record, { outbox: [{ targetKind: 'intermediary', idempotencyKey: call.key, payload: { calls: [call] } }] });
    };
    // Written in one event-loop turn: one group commit, so one transaction.
    await Promise.all([1, 2, 3].map(settle));
    const rows = await database.db.selectFrom('outbox').select(['idempotency_key', 'payload']).where('idempotency_key', 'like', 'gwreq_tx%').execute();
    expect(rows.map((r) => [r.idempotency_key, JSON.parse(r.payload).calls.map((c: any) => c.key)])).toEqual([['gwreq_tx1', ['gwreq_tx1', 'gwreq_tx2', 'gwreq_tx3']]]);
    await env.intermediary.waitForAccepted(6);
    expect([...env.intermediary.accepted.values()].map((e) => [e.idempotencyKey, e.quantity])).toEqual([
      ['gwreq_tx1:input_tokens', 11],
      ['gwreq_tx1:output_tokens', 1],
      ['gwreq_tx2:input_tokens', 12],
      ['gwreq_tx2:output_tokens', 2],
      ['gwreq_tx3:input_tokens', 13],
      ['gwreq_tx3:output_tokens', 3],
    ]);
    expect(env.intermediary.reports).toHaveLength(1);
  });

  it('a combined report the intermediary refuses for good (422) goes again call by call, and only the refused call dies', async () => {
    const { billing } = env.server.core;
    const gateway = env.server.features.gateway.services;
    const principal = { kind: 'gateway_agent' as const, projectId: gateway.tenantProjectId, keyId: null, subject: 'agt_split', payer: { kind: 'intermediary' as const, intermediaryId: 'default' } };
    const settle = (name: string) => {
      const record = billing.usageRecord(principal, { model: 'gpt-oss-120b', route: CHAT, requestId: `req_${name}`, inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 5, outputTokens: 1, status: 200 });
      const call = { key: name, requestId: name, agentId: 'agt_split', service: 'gpt-oss-120b', timestamp: '2026-01-01T00:00:00.000Z', usage: { input_tokens: 5, output_tokens: 1 } };
      return billing.write(record, { outbox: [{ targetKind: 'intermediary', idempotencyKey: name, payload: { calls: [call] } }] });
    };
    env.intermediary.refuseReportsWith(422, (events) => events.some((e) => e.requestId === 'gwreq_bad'));
    await Promise.all(['gwreq_ok1', 'gwreq_bad', 'gwreq_ok2'].map(settle));
    const dead = await deadLetterOf('gwreq_bad');
    expect(dead.payload.calls.map((c: any) => c.key)).toEqual(['gwreq_bad']);
    await env.intermediary.waitForAccepted(4);
    expect([...env.intermediary.accepted.keys()].sort()).toEqual(['gwreq_ok1:input_tokens', 'gwreq_ok1:output_tokens', 'gwreq_ok2:input_tokens', 'gwreq_ok2:output_tokens']);
    env.intermediary.refuseReports(null);
  }, 30_000);

  it('an upstream failure carries no gw-usage and reports nothing', async () => {
    env.upstream.flake('/chat/completions', 5);
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { requestId: 'gwreq_fail' });
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(answer.headers.get('gw-usage')).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(env.intermediary.reports).toHaveLength(0);
  });

  it('a report answered 500 then 200 is accepted exactly once per meter', async () => {
    env.intermediary.failReports(2, 500);
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { requestId: 'gwreq_retry' });
    expect(answer.status).toBe(200);
    await env.intermediary.waitForAccepted(2);
    expect(env.intermediary.reports.length).toBeGreaterThanOrEqual(3);
    expect([...env.intermediary.accepted.keys()].sort()).toEqual(['gwreq_retry:input_tokens', 'gwreq_retry:output_tokens']);
  });

  /** Polls the admin listing until the dead letter of `requestId` shows. */
  async function deadLetterOf(requestId: string): Promise<any> {
    let dead: any[] = [];
    for (let i = 0; i < 300 && dead.length < 1; i++) {
      await new Promise((r) => setTimeout(r, 50));
      dead = (await admin('GET', '/admin/v1/outbox/dead')).body.data.filter((d: any) => d.idempotency_key === requestId);
    }
    expect(dead).toHaveLength(1);
    return dead[0];
  }

  it('a report the intermediary refuses as sent (422) is a dead letter at once: counted, listed, and delivered once replayed', async () => {
    const metric = ['sluice_outbox_deliveries_total', 'target_kind="intermediary",outcome="dead"'] as const;
    const before = await counter(...metric);
    env.intermediary.refuseReports(422);
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { requestId: 'gwreq_dead' });
    expect(answer.status).toBe(200);
    const dead = await deadLetterOf('gwreq_dead');
    expect(dead).toMatchObject({ target_kind: 'intermediary', state: 'dead', attempts: 1, last_error: 'usage report not accepted: status 422' });
    // The message keeps the call's usage once; the report's two events are derived from it.
    expect(dead.payload).toEqual({
      calls: [
        {
          key: 'gwreq_dead',
          requestId: 'gwreq_dead',
          agentId: expect.any(String),
          service: 'gpt-oss-120b',
          timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
        },
      ],
    });
    expect(env.intermediary.reports.length).toBe(1);
    expect(await counter(...metric)).toBe(before + 1);

    env.intermediary.refuseReports(null);
    const replayed = await admin('POST', `/admin/v1/outbox/${dead.id}/replay`);
    expect(replayed.status).toBe(200);
    await env.intermediary.waitForAccepted(2);
    expect([...env.intermediary.accepted.keys()].sort()).toEqual(['gwreq_dead:input_tokens', 'gwreq_dead:output_tokens']);
  }, 30_000);

  it('a report refused with 401 (Sluice’s write key) is retried until the last attempt, then dead', async () => {
    env.intermediary.refuseReports(401);
    const answer = await signedCall(env.server.baseUrl, CHAT, chatBody(), { requestId: 'gwreq_key' });
    expect(answer.status).toBe(200);
    const dead = await deadLetterOf('gwreq_key');
    expect(dead).toMatchObject({ state: 'dead', attempts: 3, last_error: 'usage report not accepted: status 401' });
    expect(env.intermediary.reports.length).toBe(3);
    env.intermediary.refuseReports(null);
  }, 30_000);
});
