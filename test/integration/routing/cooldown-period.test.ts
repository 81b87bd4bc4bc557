/**
 * Cooldowns over several periods (a short configured one), against fake engines in their
 * own processes: a dead engine and one answering 503 beside a healthy one get `failures`
 * attempts, then one probe per cooldown period and no more; every call is served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { deadEngineUrl, startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';

const FAILURES = 3;
const COOLDOWN_MS = 2_000;
/** How many cooldown periods the calls run through. */
const PERIODS = 3;

let failing: EngineProcess;
let healthy: EngineProcess;
let server: TestServer;
let key: string;

beforeAll(async () => {
  let dead: string;
  [dead, failing, healthy] = await Promise.all([deadEngineUrl(), startEngineProcess('fail-503'), startEngineProcess('healthy')]);
  server = await startTestServer({
    env: { RATE_LIMIT_RPM: '1000000' },
    yaml: `routing:
  retries: 2
  cooldown: { failures: ${FAILURES}, window_seconds: 60, seconds: ${COOLDOWN_MS / 1000} }
models:
  period-llm:
    kind: chat
    deployments:
      - { id: period-dead, base_url: ${dead}, upstream_model: period-dead }
      - { id: period-503, base_url: ${failing.baseUrl}, upstream_model: period-503 }
      - { id: period-ok, base_url: ${healthy.baseUrl}, upstream_model: period-ok }
`,
  });
  ({ key } = await server.newTenant({ balanceUsd: 100 }));
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([failing?.kill(), healthy?.kill()]);
});

/** `sluice_upstream_requests_total` of one deployment and outcome, from /metrics. */
async function attempts(deploymentId: string, outcome: string): Promise<number> {
  const text = (await call(server.baseUrl, 'GET', '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith('sluice_upstream_requests_total{') && l.includes(`deployment="${deploymentId}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('cooldown periods', () => {
  it('gives a failing deployment `failures` attempts, then one probe per cooldown period, while every call is served', async () => {
    const started = Date.now();
    let calls = 0;
    while (Date.now() - started < PERIODS * COOLDOWN_MS + COOLDOWN_MS / 2) {
      const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'period-llm', messages: [{ role: 'user', content: 'Hello' }] } });
      expect(res.status).toBe(200);
      calls++;
    }
    const elapsedPeriods = Math.ceil((Date.now() - started) / COOLDOWN_MS);

    // The engine's own record of when each attempt reached it: after the first `failures`,
    // each later one is a probe, a whole cooldown after the one before (a failed probe sends it straight back out).
    const received = ((await (await fetch(`${failing.baseUrl}/_stats`)).json()) as { requests: { model?: string; receivedAtMs: number }[] }).requests
      .filter((r) => r.model === 'period-503')
      .map((r) => r.receivedAtMs);
    expect(received.length).toBeGreaterThan(FAILURES);
    expect(received.length).toBeLessThanOrEqual(FAILURES + elapsedPeriods);
    for (let i = FAILURES; i < received.length; i++) expect(received[i]! - received[i - 1]!).toBeGreaterThanOrEqual(COOLDOWN_MS);

    // The dead engine refuses the connection: the router's own count of its failed attempts obeys the same bound.
    const deadAttempts = await attempts('period-dead', 'failure');
    expect(deadAttempts).toBeGreaterThan(FAILURES);
    expect(deadAttempts).toBeLessThanOrEqual(FAILURES + elapsedPeriods);
    expect((await healthy.models())['period-ok']).toBe(calls);
  }, 60_000);
});
