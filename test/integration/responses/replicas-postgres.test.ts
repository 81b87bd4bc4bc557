/**
 * Stored responses are shared by replicas: two Sluice processes on one PostgreSQL schema
 * (this test's server and a replica spawned as its own process, src/main.ts). A response
 * stored through one is read, continued and deleted through the other; a background
 * response created on one is polled, streamed and cancelled on the other, whichever
 * process's worker runs it. Needs a real PostgreSQL server (test/helpers/databases.ts).
 */
import OpenAI from 'openai';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresReachable, postgresSchema } from '../../helpers/databases.js';
import { spawnProcess, type ClusterProcess } from '../../helpers/cluster.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { stall, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { MODEL, upstreamYaml } from '../batches/support/batch-helpers.js';

const reachable = await postgresReachable();
const ANSWER = 'Hello from the fake upstream.';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!reachable)('stored responses across replicas on PostgreSQL', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let replica: ClusterProcess;
  let drop: () => Promise<void>;
  let one: OpenAI;
  let other: OpenAI;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const schema = await postgresSchema();
    drop = schema.drop;
    server = await startTestServer({ yaml: upstreamYaml(upstream.baseUrl), env: { DATABASE_URL: schema.url }, startWorkers: true });
    replica = await spawnProcess('replica', { DATA_DIR: server.dataDir, SLUICE_CONFIG: path.join(server.dataDir, 'sluice.yaml'), DATABASE_URL: schema.url });
    const { key } = await server.newTenant({ balanceUsd: 1 });
    one = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    other = new OpenAI({ baseURL: `${replica.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    replica?.child.kill('SIGKILL');
    await replica?.exited;
    await server?.close();
    await drop?.();
    await upstream?.close();
  });

  it('a response stored on one replica is read, continued and deleted on the other', async () => {
    upstream.reset();
    const first = await one.responses.create({ model: MODEL, input: 'My name is Ada.' });
    expect(await other.responses.retrieve(first.id)).toEqual(first);
    const items = await other.responses.inputItems.list(first.id);
    expect(items.data.map((i: any) => i.content[0].text)).toEqual(['My name is Ada.']);
    const second = await other.responses.create({ model: MODEL, input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(upstream.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: ANSWER },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect(await other.responses.delete(first.id)).toEqual({ id: first.id, object: 'response.deleted', deleted: true });
    await expect(one.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    expect((await one.responses.retrieve(second.id)).id).toBe(second.id);
  });

  it('a background response created on one replica is polled, streamed and cancelled on the other', async () => {
    upstream.reset();
    const done = await one.responses.create({ model: MODEL, input: 'Hello', background: true });
    let polled = await other.responses.retrieve(done.id);
    while (polled.status !== 'completed') {
      await sleep(50);
      polled = await other.responses.retrieve(done.id);
    }
    expect(polled.output_text).toBe(ANSWER);
    const types: string[] = [];
    for await (const event of await other.responses.retrieve(done.id, { stream: true })) types.push(event.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');

    upstream.setDefault('/chat/completions', stall());
    const running = await one.responses.create({ model: MODEL, input: 'Hello', background: true });
    await upstream.waitForRequests(2, '/chat/completions', 30_000);
    const cancelled = await other.responses.cancel(running.id);
    expect(cancelled.status).toBe('cancelled');
    // The worker running it (in either process) hears of it at its next lease renewal.
    await upstream.waitForAborted(1, 30_000);
    expect((await one.responses.retrieve(running.id)).status).toBe('cancelled');
  }, 60_000);
});
