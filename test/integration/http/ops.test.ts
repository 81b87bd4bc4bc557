/** /healthz, /readyz, /metrics and /v1/openapi.json (graceful shutdown of the real server process: graceful-shutdown.test.ts). */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';

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
