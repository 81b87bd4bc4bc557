/** The intermediary HTTP adapter against the fake intermediary: what fails open, what fails closed, what is retried. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpIntermediaryClient } from '../../../src/adapters/intermediary/intermediary-http.js';
import { serviceSlugOf } from '../../../src/domain/gateway/intermediary.port.js';
import { READ_KEY, WRITE_KEY, startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';

let gw: FakeIntermediary;
let client: HttpIntermediaryClient;
const check = (agentId: string) =>
  client.checkAllowance({ requestId: 'gwreq_1', agentId, service: 'gpt-oss-120b', usage: [{ meter: 'input_tokens', quantity: 5 }] });
const event = (key: string) => ({
  requestId: 'gwreq_1',
  agentId: 'agt_1',
  service: 'gpt-oss-120b',
  meter: 'input_tokens' as const,
  quantity: 5,
  timestamp: '2026-11-25T12:00:00.000Z',
  idempotencyKey: key,
});

beforeAll(async () => {
  gw = await startFakeIntermediary();
  client = new HttpIntermediaryClient({ apiUrl: gw.baseUrl, readKey: READ_KEY, writeKey: WRITE_KEY, checkTimeoutMs: 300 });
});
afterAll(async () => {
  await client.close();
  await gw.close();
});
beforeEach(() => gw.reset());

describe('allowance check', () => {
  it('sends the request with the read key and reads allow and deny', async () => {
    expect(await check('agt_1')).toEqual({ kind: 'allowed' });
    expect(gw.checks[0]).toEqual({ requestId: 'gwreq_1', agentId: 'agt_1', service: 'gpt-oss-120b', usage: [{ meter: 'input_tokens', quantity: 5 }] });
    gw.check('agt_2', { kind: 'deny', reason: 'spend_cap_reached' });
    expect(await check('agt_2')).toEqual({ kind: 'denied', reason: 'spend_cap_reached' });
  });

  it.each([
    ['a timeout', { kind: 'delay', ms: 1000 }, 'timeout'],
    ['a reset', { kind: 'reset' }, undefined],
    ['a 500', { kind: 'status', status: 500 }, 'status 500'],
    ['a 429', { kind: 'status', status: 429 }, 'status 429'],
    ['an answer outside the contract', { kind: 'malformed' }, 'invalid answer'],
  ] as const)('%s is an outage (fail open)', async (_name, behavior, cause) => {
    gw.check('agt_x', behavior);
    const outcome = await check('agt_x');
    expect(outcome.kind).toBe('unavailable');
    if (cause) expect(outcome).toEqual({ kind: 'unavailable', cause });
  });

  it('a refused read key or a 400 is a misconfiguration (fail closed)', async () => {
    const wrongKey = new HttpIntermediaryClient({ apiUrl: gw.baseUrl, readKey: 'wrong', writeKey: null, checkTimeoutMs: 300 });
    expect(await wrongKey.checkAllowance({ requestId: '', agentId: 'a', service: 's', usage: [] })).toEqual({ kind: 'misconfigured', status: 401 });
    await wrongKey.close();
    gw.check('agt_4', { kind: 'status', status: 400 });
    expect(await check('agt_4')).toEqual({ kind: 'misconfigured', status: 400 });
  });

  it('a closed port is an outage', async () => {
    const nowhere = new HttpIntermediaryClient({ apiUrl: 'http://127.0.0.1:1', readKey: READ_KEY, writeKey: WRITE_KEY, checkTimeoutMs: 300 });
    expect(await nowhere.checkAllowance({ requestId: '', agentId: 'a', service: 's', usage: [] })).toEqual({ kind: 'unavailable', cause: 'ECONNREFUSED' });
    await nowhere.close();
  });
});

describe('usage report', () => {
  it('delivers with the write key; the intermediary counts duplicates', async () => {
    expect(await client.reportUsage([event('r1:input_tokens')])).toEqual({ kind: 'delivered', accepted: 1, duplicates: 0 });
    expect(await client.reportUsage([event('r1:input_tokens')])).toEqual({ kind: 'delivered', accepted: 0, duplicates: 1 });
    expect(gw.accepted.size).toBe(1);
  });

  it('retries 5xx and 429 (honouring Retry-After); any other 4xx is rejected', async () => {
    gw.failReports(1, 503);
    expect(await client.reportUsage([event('r2:input_tokens')])).toEqual({ kind: 'retry', cause: 'status 503', retryAfterMs: null });
    gw.failReports(1, 429, '7');
    expect(await client.reportUsage([event('r2:input_tokens')])).toEqual({ kind: 'retry', cause: 'status 429', retryAfterMs: 7000 });
    gw.failReports(1, 422);
    expect(await client.reportUsage([event('r2:input_tokens')])).toEqual({ kind: 'rejected', cause: 'status 422' });
  });
});

describe('service slug', () => {
  it('kebab-cases the model id', () => {
    expect(serviceSlugOf('llama-3.1-8b-instruct-fast')).toBe('llama-3-1-8b-instruct-fast');
    expect(serviceSlugOf('LFM2.5-1.2B-Instruct')).toBe('lfm2-5-1-2b-instruct');
    expect(serviceSlugOf('bge-small-en-v1.5')).toBe('bge-small-en-v1-5');
  });
});
