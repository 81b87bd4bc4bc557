/** /healthz, /readyz, /metrics, /v1/openapi.json, and graceful shutdown of the real server process. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { tempDir } from '../../helpers/databases.js';

const REPO = path.resolve(import.meta.dirname, '../../..');

describe('operations routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server.close());

  it('GET /healthz is ok without a key', async () => {
    const res = await call(server.baseUrl, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz is ready when the database answers and migrations are applied', async () => {
    const res = await call(server.baseUrl, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', blob_store: 'ok' } });
  });

  it('GET /metrics counts requests by route template, method and status', async () => {
    await call(server.baseUrl, 'GET', '/healthz');
    await call(server.baseUrl, 'GET', '/admin/v1/projects/00000000-0000-4000-8000-000000000000');
    await call(server.baseUrl, 'GET', '/no/such/route/zq-not-a-label');
    const res = await call(server.baseUrl, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = res.body as string;
    expect(text).toMatch(/^sluice_http_requests_total\{route="\/healthz",method="GET",status="200"\} [1-9]\d*$/m);
    // Unauthenticated admin call: the route template, not the id, is the label.
    expect(text).toMatch(/^sluice_http_requests_total\{route="\/admin\/v1\/projects\/:id",method="GET",status="401"\} 1$/m);
    expect(text).toMatch(/^sluice_http_requests_total\{route="unmatched",method="GET",status="404"\} [1-9]\d*$/m);
    // Not the path itself (a digit string here once matched a gauge's value by chance).
    expect(text).not.toContain('zq-not-a-label');
    expect(text).toContain('# TYPE sluice_http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE sluice_http_requests_in_flight gauge');
    // The scrape itself is the one request in flight.
    expect(text).toMatch(/^sluice_http_requests_in_flight 1$/m);
  });

  it('GET /v1/openapi.json is an OpenAPI 3 document with the admin paths', async () => {
    const res = await call(server.baseUrl, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const paths = Object.keys(res.body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/admin/v1/projects',
        '/admin/v1/projects/{id}',
        '/admin/v1/projects/{id}/keys',
        '/admin/v1/keys/{id}/revoke',
        '/admin/v1/projects/{id}/credits',
        '/admin/v1/projects/{id}/usage',
      ]),
    );
    // POST grants credit; GET lists the grants (the console's balance page).
    expect(Object.keys(res.body.paths['/admin/v1/projects/{id}/credits']).sort()).toEqual(['get', 'post']);
    for (const hidden of ['/healthz', '/readyz', '/metrics', '/v1/openapi.json']) expect(paths).not.toContain(hidden);
  });
});

describe('readiness failures', () => {
  it('/readyz is 503 while a migration is pending', async () => {
    const server = await startTestServer();
    try {
      await sql`delete from kysely_migration where name = ${'0001-foundation'}`.execute(server.core.database.db);
      const res = await call(server.baseUrl, 'GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', checks: { database: 'ok', migrations: 'pending: 0001-foundation', blob_store: 'ok' } });
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    } finally {
      await server.close();
    }
  });

  it('/readyz is 503 when the database is unreachable', async () => {
    const server = await startTestServer();
    try {
      await server.core.database.db.destroy();
      const res = await call(server.baseUrl, 'GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('not_ready');
      expect(res.body.checks.database).toMatch(/^unreachable: /);
    } finally {
      await server.close();
    }
  });
});

interface ServerProcess {
  child: ChildProcess;
  logs: Record<string, any>[];
  baseUrl: string;
  waitForLog(predicate: (line: Record<string, any>) => boolean): Promise<Record<string, any>>;
  exited: Promise<number | null>;
}

/** Starts test/fixtures/slow-server.ts (src/main.ts's serve() plus a slow route) on a free port. */
async function startServerProcess(): Promise<ServerProcess> {
  const dataDir = tempDir();
  const child = spawn(path.join(REPO, 'node_modules/.bin/tsx'), [path.join(REPO, 'test/fixtures/slow-server.ts')], {
    cwd: dataDir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', SLUICE_WORKERS: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, any>[] = [];
  const watchers: { predicate: (line: Record<string, any>) => boolean; resolve: (line: Record<string, any>) => void }[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: Record<string, any>;
    try {
      line = JSON.parse(text);
    } catch {
      return;
    }
    logs.push(line);
    for (const w of watchers.filter((w) => w.predicate(line))) w.resolve(line);
  });
  const waitForLog = (predicate: (line: Record<string, any>) => boolean) => {
    const seen = logs.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, any>>((resolve, reject) => {
      watchers.push({ predicate, resolve });
      void exited.then((code) => reject(new Error(`server exited (${code}) before the expected log line; stderr: ${stderr}`)));
    });
  };
  const listening = await waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at http://127.0.0.1:'));
  const baseUrl = /(http:\/\/127\.0\.0\.1:\d+)/.exec(listening.msg)![1]!;
  return { child, logs, baseUrl, waitForLog, exited };
}

describe('graceful shutdown', () => {
  it('SIGTERM lets the in-flight request finish, then the process exits 0', async () => {
    const server = await startServerProcess();
    try {
      expect((await call(server.baseUrl, 'GET', '/healthz')).status).toBe(200);
      const inFlight = call(server.baseUrl, 'GET', '/_test/slow');
      await server.waitForLog((l) => l.msg === 'slow request started');
      server.child.kill('SIGTERM');
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'slow', done: true });
      expect(await server.exited).toBe(0);
      expect(server.logs.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  }, 60_000); // a keep-alive connection that held close() open would end in close-with-grace's 30 s timeout (exit 1)
});
