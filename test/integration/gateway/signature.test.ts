/**
 * The gateway signature over HTTP: every refusal is the same 401 with nothing else said,
 * sends no allowance check and runs nothing; a valid signature (current or previous kid)
 * is served. The reason of each refusal is counted on /metrics.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sign } from '../../helpers/fake-intermediary.js';
import { startTestServer } from '../../helpers/harness.js';
import { KID, PREVIOUS_SECRET, SECRET, nowSeconds, signedCall, startGatewayEnv, type GatewayEnv } from './setup.js';

const PATH = '/gateway/v1/embeddings';
const BODY = { model: 'all-minilm-l6-v2', input: 'hi' };
const INVALID = { error: 'invalid_gateway_signature' };

let env: GatewayEnv;
beforeAll(async () => {
  env = await startGatewayEnv();
});
afterAll(() => env.close());
beforeEach(() => {
  env.upstream.reset();
  env.intermediary.reset();
});

async function rejectionCount(reason: string): Promise<number> {
  const text = await (await fetch(`${env.server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`sluice_gateway_signature_rejections_total{reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function expectRefused(answer: { status: number; body: unknown; headers: Headers }, reason: string, before: number) {
  expect(answer.status).toBe(401);
  expect(answer.body).toEqual(INVALID);
  expect(answer.headers.get('gw-usage')).toBeNull();
  expect(env.intermediary.checks).toHaveLength(0);
  expect(env.upstream.count('/embeddings')).toBe(0);
  expect(await rejectionCount(reason)).toBe(before + 1);
}

describe('gateway signature over HTTP', () => {
  it('serves a valid signature: 200, gw-usage, the request id echoed, one allowance check', async () => {
    const answer = await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_valid_1' });
    expect(answer.status).toBe(200);
    expect(answer.body.object).toBe('list');
    expect(answer.headers.get('gw-request-id')).toBe('gwreq_valid_1');
    expect(answer.headers.get('gw-usage')).toMatch(/^input_tokens=\d+$/);
    expect(env.intermediary.checks).toHaveLength(1);
  });

  it('accepts the previous kid during a rotation', async () => {
    const answer = await signedCall(env.server.baseUrl, PATH, BODY, { kid: 'k0', secret: PREVIOUS_SECRET });
    expect(answer.status).toBe(200);
  });

  it('accepts several v1 of which one is valid', async () => {
    const t = nowSeconds();
    const good = sign({ secret: SECRET, kid: KID, t, method: 'POST', path: PATH, body: JSON.stringify(BODY), requestId: 'gwreq_multi', agentId: 'agt_1' });
    const header = `t=${t},kid=${KID},v1=${'0'.repeat(64)},${good.split(',')[2]}`;
    const answer = await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_multi', signature: header });
    expect(answer.status).toBe(200);
  });

  it.each([
    ['missing header', () => ({ signature: null }), 'missing_or_malformed_signature'],
    ['malformed header', () => ({ signature: 't=1,kid=k1' }), 'missing_or_malformed_signature'],
    ['uppercase hex', () => ({ signature: `t=${nowSeconds()},kid=k1,v1=${'A'.repeat(64)}` }), 'missing_or_malformed_signature'],
    ['header over 1 KiB', () => ({ signature: `t=${nowSeconds()},kid=k1,v1=${'a'.repeat(64)},x=${'y'.repeat(1024)}` }), 'missing_or_malformed_signature'],
    ['unknown kid', () => ({ kid: 'k9' }), 'unknown_kid'],
    ['wrong secret', () => ({ secret: 'gwsec_not_the_one_000000' }), 'invalid_signature'],
    ['timestamp 301 s old', () => ({ t: nowSeconds() - 301 }), 'stale_timestamp'],
    ['timestamp 301 s ahead', () => ({ t: nowSeconds() + 301 }), 'stale_timestamp'],
    ['body changed by one byte', () => ({ sentBody: JSON.stringify({ ...BODY, input: 'hI' }) }), 'invalid_signature'],
  ] as const)('refuses %s', async (_name, options, reason) => {
    const before = await rejectionCount(reason);
    await expectRefused(await signedCall(env.server.baseUrl, PATH, BODY, options()), reason, before);
  });

  it('refuses a signature made for another agent or another request id', async () => {
    const t = nowSeconds();
    const forAgent1 = sign({ secret: SECRET, kid: KID, t, method: 'POST', path: PATH, body: JSON.stringify(BODY), requestId: 'gwreq_a', agentId: 'agt_1' });
    const before = await rejectionCount('invalid_signature');
    await expectRefused(await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_a', agentId: 'agt_2', signature: forAgent1 }), 'invalid_signature', before);
    await expectRefused(await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_b', agentId: 'agt_1', signature: forAgent1 }), 'invalid_signature', before + 1);
    await expectRefused(await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_a', agentId: null, signature: forAgent1 }), 'invalid_signature', before + 2);
  });

  it('refuses a signed query string that was changed', async () => {
    const t = nowSeconds();
    const signature = sign({ secret: SECRET, kid: KID, t, method: 'POST', path: `${PATH}?trace=1`, body: JSON.stringify(BODY), requestId: 'gwreq_q', agentId: 'agt_1' });
    const before = await rejectionCount('invalid_signature');
    await expectRefused(await signedCall(env.server.baseUrl, `${PATH}?trace=2`, BODY, { requestId: 'gwreq_q', signature }), 'invalid_signature', before);
    env.intermediary.reset();
    expect((await signedCall(env.server.baseUrl, `${PATH}?trace=1`, BODY, { requestId: 'gwreq_q', signature })).status).toBe(200);
  });

  it('refuses a replay: same request id, or same (kid, t, v1) when there is none', async () => {
    const first = await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_replay' });
    expect(first.status).toBe(200);
    env.intermediary.reset();
    env.upstream.reset();
    const before = await rejectionCount('replayed');
    await expectRefused(await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_replay', signature: first.signature }), 'replayed', before);

    const anonymous = await signedCall(env.server.baseUrl, PATH, BODY, { requestId: null });
    expect(anonymous.status).toBe(200);
    env.intermediary.reset();
    env.upstream.reset();
    await expectRefused(await signedCall(env.server.baseUrl, PATH, BODY, { requestId: null, signature: anonymous.signature }), 'replayed', before + 1);
  });

  it('a forged request does not burn the request id of the real one', async () => {
    const forged = await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_burn', secret: 'gwsec_forger_0000000000' });
    expect(forged.status).toBe(401);
    expect((await signedCall(env.server.baseUrl, PATH, BODY, { requestId: 'gwreq_burn' })).status).toBe(200);
  });

  it('a valid signature over malformed JSON is the usual 400, after the signature', async () => {
    const answer = await signedCall(env.server.baseUrl, PATH, '{"model": ');
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_json');
    expect(env.intermediary.checks).toHaveLength(0);
  });

  it('malformed JSON with no signature is the 401, not a parse error', async () => {
    const answer = await signedCall(env.server.baseUrl, PATH, '{"model": ', { signature: null });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(INVALID);
  });
});

describe('gateway not configured', () => {
  it('answers every gateway route with the 401', async () => {
    const server = await startTestServer();
    try {
      for (const path of ['/gateway/v1/chat/completions', '/gateway/v1/responses', PATH]) {
        const answer = await signedCall(server.baseUrl, path, BODY);
        expect(answer.status).toBe(401);
        expect(answer.body).toEqual(INVALID);
      }
    } finally {
      await server.close();
    }
  });
});
