/**
 * /readyz tells the truth about every shared dependency: the blob store (local disk or S3)
 * and Redis when REDIS_URL is set; it names the one that is down without leaking hosts.
 * An unreachable REDIS_URL at start-up is logged as a warning.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeS3, type FakeS3 } from '../../helpers/s3-server.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';
import { refusedPort } from '../../helpers/refused-port.js';

/** A logger whose lines the test can read. */
function capturedLogger() {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text));
      callback();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

describe('/readyz with S3 blob storage', () => {
  let s3: FakeS3;
  let server: TestServer;
  beforeAll(async () => {
    s3 = await startFakeS3();
    server = await startTestServer({
      env: { BLOB_URL: `s3://${s3.bucket}?endpoint=${s3.endpoint}`, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    });
  });
  afterAll(() => server.close());

  it('is ready while the bucket answers, and 503 naming blob_store once it does not', async () => {
    const ready = await call(server.baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', blob_store: 'ok' } });

    await s3.close();
    const down = await call(server.baseUrl, 'GET', '/readyz');
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not_ready');
    expect(down.body.checks).toMatchObject({ database: 'ok', migrations: 'ok' });
    expect(down.body.checks.blob_store).toMatch(/^unreachable \([A-Za-z0-9_.-]+\)$/);
    expect(JSON.stringify(down.body)).not.toContain('127.0.0.1');
  }, 30_000);
});

describe('/readyz with Redis', () => {
  it('reports redis ok when REDIS_URL answers', async (context) => {
    if (!(await redisReachable())) context.skip();
    const server = await startTestServer({ env: { REDIS_URL } });
    try {
      const res = await call(server.baseUrl, 'GET', '/readyz');
      expect(res.status).toBe(200);
      expect(res.body.checks).toEqual({ database: 'ok', migrations: 'ok', blob_store: 'ok', redis: 'ok' });
    } finally {
      await server.close();
    }
  });

  it('an unreachable REDIS_URL: a start-up warning, and /readyz 503 naming redis', async () => {
    const port = await refusedPort();
    const { logger, lines } = capturedLogger();
    const server = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${port}` }, overrides: { logger } });
    try {
      const res = await call(server.baseUrl, 'GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.checks).toMatchObject({ database: 'ok', migrations: 'ok', blob_store: 'ok' });
      expect(res.body.checks.redis).toMatch(/^unreachable \([A-Za-z0-9_.-]+\)$/);
      const warning = lines.find((l) => l.dependency === 'redis' && l.msg.startsWith('REDIS_URL is set but Redis is unreachable'));
      expect(warning).toMatchObject({ level: 40 });
      expect(warning!.msg).toContain('rate limits are counted per replica');
      // Without REDIS_URL there is no redis check at all.
    } finally {
      await server.close();
    }
  }, 30_000);

  it('no REDIS_URL: no redis check', async () => {
    const server = await startTestServer();
    try {
      expect((await call(server.baseUrl, 'GET', '/readyz')).body.checks).toEqual({ database: 'ok', migrations: 'ok', blob_store: 'ok' });
    } finally {
      await server.close();
    }
  });
});
