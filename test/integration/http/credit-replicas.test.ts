/**
 * The credit rule across replicas (docs/credits.md, "Credit rule"): holds live in each replica's
 * memory, so with N replicas on one PostgreSQL a burst is served at most N times what
 * one replica would serve, and the balance goes below zero by at most (N − 1) × the
 * credit at the time of the burst. Two replicas here, on the real server.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../../src/storage/db/database.js';
import { postgresReachable, postgresSchemaDatabase } from '../../helpers/databases.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../../helpers/probe-routes.js';

const available = await postgresReachable();
const REPLICAS = 2;
const CREDIT_CALLS = 20;

let schema: Database | undefined;
const replicas: TestServer[] = [];

beforeAll(async () => {
  if (!available) return;
  const { database, url } = await postgresSchemaDatabase();
  schema = database;
  for (let i = 0; i < REPLICAS; i++) {
    replicas.push(await startTestServer({ env: { DATABASE_URL: url, RATE_LIMIT_RPM: '10000' }, extendApp: registerProbeRoutes }));
  }
});
afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await schema?.close();
});

it.skipIf(!available)('a burst over two replicas serves at most 2 × the credit and overdraws by at most 1 × the credit', async () => {
  const tenant = await replicas[0]!.newTenant({ balanceUsd: CREDIT_CALLS / 1_000_000 }); // 20 calls of 1 µ$
  // Slow calls keep every admitted one in flight, so no replica sees another's debits.
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      call(replicas[i % REPLICAS]!.baseUrl, 'POST', `${PROBE}/spend`, { key: tenant.key, body: { cost_micros: 1, delay_ms: 300 } }),
    ),
  );
  const served = answers.filter((a) => a.status === 200).length;
  expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
  expect(served).toBeGreaterThanOrEqual(CREDIT_CALLS);
  expect(served).toBeLessThanOrEqual(REPLICAS * CREDIT_CALLS);
  const balance = (await replicas[1]!.core.projects.getProject(tenant.projectId)).balanceMicros;
  expect(balance).toBe(CREDIT_CALLS - served);
  expect(balance).toBeGreaterThanOrEqual(-(REPLICAS - 1) * CREDIT_CALLS);
  expect((await replicas[0]!.core.projects.listUsage(tenant.projectId, 500)).items).toHaveLength(served);
  // Once the debits are visible everywhere, neither replica admits more.
  for (const replica of replicas) {
    expect((await call(replica.baseUrl, 'POST', `${PROBE}/spend`, { key: tenant.key, body: { cost_micros: 1 } })).status).toBe(429);
  }
});
