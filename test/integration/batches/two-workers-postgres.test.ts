/**
 * Two workers (two assemblies, each with its own connection pool and runner) share one
 * PostgreSQL database and one blob root: they split a batch's shards between them and
 * every line still runs and bills once. Needs a real server (test/helpers/databases.ts).
 */
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { assemble, type Assembly } from '../../../src/composition/features.js';
import type { BatchRunner } from '../../../src/worker/batch-runner.js';
import { postgresReachable, postgresSchemaDatabase } from '../../helpers/databases.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { handler, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { isTerminal, requestLines, resultsOf, startBatch, upstreamYaml, waitForBatch } from './support/batch-helpers.js';
import { chatCompletion } from './support/scripted-upstream.js';

const reachable = await postgresReachable();
const LINES = 200;

describe.skipIf(!reachable)('two workers on one PostgreSQL database', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let second: Assembly;
  let dropSchema: () => Promise<void>;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.setDefault(
      '/chat/completions',
      handler(async (req, res) => {
        await new Promise((r) => setTimeout(r, 30));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(chatCompletion(String(req.body?.model), 'ok')));
      }),
    );
    const { database, url } = await postgresSchemaDatabase();
    dropSchema = () => database.close();
    const yaml = upstreamYaml(upstream.baseUrl, { shard_lines: 5, per_batch_concurrency: 4, global_concurrency: 8 });
    server = await startTestServer({ yaml, env: { DATABASE_URL: url }, startWorkers: true });
    const env = { DATA_DIR: server.dataDir, SLUICE_CONFIG: path.join(server.dataDir, 'sluice.yaml'), DATABASE_URL: url, LOG_LEVEL: 'silent' };
    second = await assemble(loadConfig(env, server.dataDir), { logger: pino({ level: 'silent' }) });
    second.startWorkers();
  });
  afterAll(async () => {
    await second?.close();
    await server?.close();
    await dropSchema?.();
    await upstream?.close();
  });

  const runnerOf = (c: Assembly) => c.workers.find((w) => w.name === 'batch-runner') as BatchRunner;

  it('splits the shards and records every line once', async () => {
    const { key, projectId } = await server.newTenant({ balanceUsd: 1 });
    const { batch } = await startBatch(server.baseUrl, key, requestLines(LINES));
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal, 120_000);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: LINES, completed: LINES, failed: 0 } });
    const { output, seen } = await resultsOf(server.baseUrl, key, done);
    expect(output).toHaveLength(LINES);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    const a = runnerOf(server.assembly).stats.shardsDone;
    const b = runnerOf(second).stats.shardsDone;
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    expect(a + b).toBeGreaterThanOrEqual(LINES / 5);
    const usage = await server.core.projects.listUsage(projectId, 1000);
    expect(usage.items).toHaveLength(LINES);
    // A lease lost on a loaded machine may run a line twice upstream; it is still recorded and billed once.
    expect(upstream.count('/chat/completions')).toBeGreaterThanOrEqual(LINES);
  }, 180_000);
});
