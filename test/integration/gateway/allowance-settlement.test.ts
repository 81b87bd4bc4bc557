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
    const pending = await env.server.container.database.db.selectFrom('outbox').select('id').where('state', '=', 'pending').execute();
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
    const usage = await env.server.container.repositories.usage.listByProject(env.server.container.gateway.tenantProjectId, 10);
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
    expect(dead.payload.events.map((e: any) => e.idempotencyKey)).toEqual(['gwreq_dead:input_tokens', 'gwreq_dead:output_tokens']);
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
