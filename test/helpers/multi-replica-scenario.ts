/**
 * The multi-replica proof, shared by test/integration/scale/multi-replica.test.ts and
 * deploy/prove-scale-out.ts (both 5,000 lines by default): 3 HTTP
 * replicas and 2 batch workers on one PostgreSQL schema, one Redis and one S3 bucket
 * (s3rver), behind a round-robin proxy. While a batch runs, one replica and one worker are
 * SIGKILLed and restarted while chat requests flow through the proxy; then: no line lost or duplicated, every line billed once, a file
 * uploaded through one replica downloads from another, the per-key limit is shared, and a
 * key revoked on one replica is refused by all within the auth cache TTL.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { postgresSchemaDatabase, tempDir } from './databases.js';
import { startFakeS3 } from './s3-server.js';
import { startFakeUpstream } from './fake-upstream.js';
import { spawnProcess, startRoundRobinProxy, type ClusterProcess } from './cluster.js';

const ADMIN = 'scale-admin-token-0123456789abcdef';
const MODEL = 'llama-3.1-8b-instruct-fast';
const RPM = 40;
const AUTH_TTL_MS = 500;

export interface ScaleReport {
  lines: number;
  completed: number;
  usageRecords: number;
  /** Output lines whose custom_id appeared before (asserted 0). */
  duplicates: number;
  /** Lines with a result when the replica and the worker were SIGKILLed. */
  killedAtLine: number;
  killed: { replicas: number; workers: number };
  /** From the batch's creation to its completion (for the operator's summary; tests never assert it). */
  batchSeconds: number;
  servedByReplica: number[];
  admittedOfTwiceTheLimit: number;
  /** Chat requests through the proxy up to the restart: answered, cut with their replica, and answered between the kill and the restart. */
  chat: { ok: number; cut: number; okDuringKill: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, text };
}

function upload(baseUrl: string, key: string, content: string) {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([content]), 'input.jsonl');
  return json(`${baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
}

export async function proveScaleOut(options: { lines: number; redisUrl: string; log?: (line: string) => void }): Promise<ScaleReport> {
  const log = options.log ?? (() => {});
  const { database, url: databaseUrl } = await postgresSchemaDatabase();
  const s3 = await startFakeS3();
  const upstream = await startFakeUpstream();
  // Slow enough that the batch is still running when the kill comes, at any size: the kill
  // comes at a quarter of the lines, and the other three quarters take at least
  // lines × 3/4 × 20 ms ÷ 4 (global_concurrency), 19 s at 5,000 lines and 1 s at 300.
  // (50 ms made 5,000 lines take at least 62 s whatever the machine.)
  upstream.chat({ delayMs: 20 });
  const dir = tempDir('sluice-scale-');
  const configFile = path.join(dir, 'sluice.yaml');
  writeFileSync(
    configFile,
    [
      'models:',
      `  ${MODEL}:`,
      '    backend: openai',
      `    base_url: ${upstream.baseUrl}`,
      '    price: { input_per_million_usd: 1, output_per_million_usd: 1 }',
      'batches: { lease_seconds: 2, shard_lines: 50, retry_base_ms: 20, global_concurrency: 4 }',
      `rate_limits: { redis_prefix: "scale-${path.basename(dir)}" }`,
      '',
    ].join('\n'),
  );
  const env = {
    SLUICE_CONFIG: configFile,
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redisUrl,
    BLOB_URL: `s3://${s3.bucket}/scale?endpoint=${s3.endpoint}`,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    SLUICE_ADMIN_TOKEN: ADMIN,
    SLUICE_WORKERS: 'off',
    RATE_LIMIT_RPM: String(RPM),
    AUTH_CACHE_TTL_MS: String(AUTH_TTL_MS),
    FREE_CREDITS_USD: '1000',
  };
  const processes: ClusterProcess[] = [];
  const spawnTracked = async (kind: 'replica' | 'worker') => {
    const p = await spawnProcess(kind, env);
    processes.push(p);
    return p;
  };
  const replicas: (ClusterProcess | null)[] = [];
  // The first replica migrates the schema; the others then start together.
  replicas.push(await spawnTracked('replica'));
  replicas.push(...(await Promise.all([spawnTracked('replica'), spawnTracked('replica')])));
  const workers = await Promise.all([spawnTracked('worker'), spawnTracked('worker')]);
  const proxy = await startRoundRobinProxy(() => replicas.map((r) => r?.baseUrl ?? null));
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  // Keys are minted during the kill too: a 502 (the replica died mid-request) is tried again.
  const newKey = async (projectId: string): Promise<{ id: string; key: string }> => {
    for (let attempt = 1; ; attempt++) {
      const res = await json(`${proxy.baseUrl}/admin/v1/projects/${projectId}/keys`, { method: 'POST', headers: admin, body: '{}' });
      if (res.status === 200) return res.body as { id: string; key: string };
      if (res.status !== 502 || attempt >= 3) throw new Error(`minting a key answered ${res.status}: ${res.text}`);
    }
  };

  try {
    log('cluster up: 3 replicas, 2 workers');
    const project = (await json(`${proxy.baseUrl}/admin/v1/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'scale' }) })).body;
    const batchKey = await newKey(project.id);

    // A batch through the proxy.
    const input = Array.from({ length: options.lines }, (_, i) =>
      JSON.stringify({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `n ${i}` }] } }),
    ).join('\n');
    const file = await upload(proxy.baseUrl, batchKey.key, `${input}\n`);
    assert.equal(file.status, 200, file.text);
    const created = await json(`${proxy.baseUrl}/v1/batches`, {
      method: 'POST',
      headers: { 'x-api-key': batchKey.key, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.body.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    assert.equal(created.status, 200, created.text);
    const batchId = created.body.id as string;
    const batchStarted = performance.now();
    const progress = async () =>
      (
        await sql<{ status: string; done: string }>`select status, (select count(*) from batch_line_results r where r.batch_id = b.id) as done from batches b where id = ${batchId}`.execute(database.db)
      ).rows[0]!;

    // Chat load through the proxy for the whole kill-and-restart window, one request at a
    // time; a key serves fewer requests than the per-key limit, then the next key takes over,
    // so the load lasts as long as the batch takes to reach the kill, at any size.
    const chatKeys = [await newKey(project.id)];
    const chat = { ok: 0, cut: 0, okDuringKill: 0, running: true, killing: false };
    const chatLoad = (async () => {
      let onKey = 0;
      while (chat.running) {
        if (onKey >= RPM - 5) {
          chatKeys.push(await newKey(project.id));
          onKey = 0;
        }
        onKey += 1;
        let res: Response;
        try {
          res = await fetch(`${proxy.baseUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'x-api-key': chatKeys.at(-1)!.key, 'content-type': 'application/json' },
            body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
          });
          await res.arrayBuffer();
        } catch (err) {
          // The replica died after its answer had begun: the proxy can only reset the
          // connection. That is the same cut as a 502, and only the kill may cause it.
          if (!chat.killing) throw err;
          chat.cut += 1;
          continue;
        }
        // 502: the proxy's replica died with the request in flight (a balancer would retry it).
        if (res.status === 200) {
          chat.ok += 1;
          if (chat.killing) chat.okDuringKill += 1;
        } else if (res.status === 502) chat.cut += 1;
        else throw new Error(`chat under load answered ${res.status}`);
        await sleep(100);
      }
    })();

    // Mid-batch: SIGKILL one replica and one worker, then restart both.
    while (Number((await progress()).done) < options.lines / 4) await sleep(50);
    const killedAtLine = Number((await progress()).done);
    log(`killing replica 0 and worker 0 at ${killedAtLine} lines`);
    chat.killing = true;
    replicas[0]!.child.kill('SIGKILL');
    workers[0]!.child.kill('SIGKILL');
    await Promise.all([replicas[0]!.exited, workers[0]!.exited]);
    replicas[0] = null;
    assert.ok(Number((await progress()).done) < options.lines, 'the batch was still running when the processes were killed');
    [replicas[0], workers[0]] = await Promise.all([spawnTracked('replica'), spawnTracked('worker')]);
    log('restarted');
    chat.running = false;
    await chatLoad;

    let state = await progress();
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(state.status)) {
      await sleep(100);
      state = await progress();
    }
    assert.equal(state.status, 'completed');
    const batchSeconds = Math.round((performance.now() - batchStarted) / 100) / 10;

    // No line lost or duplicated; each billed once.
    const batch = (await json(`${proxy.baseUrl}/v1/batches/${batchId}`, { headers: { 'x-api-key': batchKey.key } })).body;
    assert.deepEqual(batch.request_counts, { total: options.lines, completed: options.lines, failed: 0 });
    const output = await json(`${proxy.baseUrl}/v1/files/${batch.output_file_id}/content`, { headers: { 'x-api-key': batchKey.key } });
    const ids = output.text.split('\n').filter(Boolean).map((l) => JSON.parse(l).custom_id as string);
    const duplicates = ids.length - new Set(ids).size;
    assert.equal(ids.length, options.lines);
    assert.equal(duplicates, 0);
    const usage = (
      await sql<{ n: string; distinct_requests: string }>`select count(*) as n, count(distinct request_id) as distinct_requests from usage_records where project_id = ${project.id} and route = 'batch'`.execute(database.db)
    ).rows[0]!;
    assert.equal(Number(usage.n), options.lines, 'one usage record per line');
    assert.equal(Number(usage.distinct_requests), options.lines);

    // Chat answered through the kill: each 200 billed once; a request cut mid-flight at most once.
    const chatKeyIds = chatKeys.map((k) => k.id);
    const chatBilled = Number(
      (await sql<{ n: string }>`select count(*) as n from usage_records where key_id in (${sql.join(chatKeyIds)})`.execute(database.db)).rows[0]!.n,
    );
    assert.ok(chat.okDuringKill > 0, 'chat requests were answered between the kill and the restart');
    assert.ok(chatBilled >= chat.ok && chatBilled <= chat.ok + chat.cut, `chat billed ${chatBilled} for ${chat.ok} answered, ${chat.cut} cut`);

    // A file uploaded through one replica downloads from another.
    const shared = await upload(replicas[1]!.baseUrl!, batchKey.key, '{"custom_id":"x"}\n');
    assert.equal(shared.status, 200, shared.text);
    const fetched = await json(`${replicas[2]!.baseUrl}/v1/files/${shared.body.id}/content`, { headers: { 'x-api-key': batchKey.key } });
    assert.equal(fetched.status, 200);
    assert.equal(fetched.text, '{"custom_id":"x"}\n');

    // The per-key limit is one counter across replicas.
    const limited = await newKey(project.id);
    let admitted = 0;
    for (let i = 0; i < RPM * 2; i++) {
      const res = await fetch(`${proxy.baseUrl}/v1/models`, { headers: { 'x-api-key': limited.key } });
      await res.arrayBuffer();
      if (res.status === 200) admitted += 1;
      else assert.equal(res.status, 429);
    }
    assert.equal(admitted, RPM, `admitted ${admitted} of ${RPM * 2}, limit ${RPM} per key across 3 replicas`);

    // A key revoked on one replica is refused by all within the auth cache TTL.
    const revoked = await newKey(project.id);
    for (const replica of replicas) {
      assert.equal((await fetch(`${replica!.baseUrl}/v1/files`, { headers: { 'x-api-key': revoked.key } })).status, 200);
    }
    const revoke = await json(`${replicas[0]!.baseUrl}/admin/v1/keys/${revoked.id}/revoke`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(revoke.status, 200, revoke.text);
    await sleep(AUTH_TTL_MS + 100);
    for (const replica of replicas) {
      assert.equal((await fetch(`${replica!.baseUrl}/v1/files`, { headers: { 'x-api-key': revoked.key } })).status, 403);
    }

    return {
      lines: options.lines,
      completed: batch.request_counts.completed,
      usageRecords: Number(usage.n),
      duplicates,
      killedAtLine,
      killed: { replicas: 1, workers: 1 },
      batchSeconds,
      servedByReplica: [...proxy.served],
      admittedOfTwiceTheLimit: admitted,
      chat: { ok: chat.ok, cut: chat.cut, okDuringKill: chat.okDuringKill },
    };
  } finally {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await proxy.close();
    await upstream.close();
    await s3.close();
    await database.close();
  }
}
