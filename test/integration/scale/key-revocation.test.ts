/**
 * A key revoked on one replica stops working on another at once: two replica processes
 * on one PostgreSQL schema, each with a 60 s key-lookup cache, so only the revocation's
 * notification (LISTEN/NOTIFY) can explain the other replica refusing the key it has
 * cached. Needs the real PostgreSQL (several processes share it); skipped when absent,
 * unless CI requires it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { POSTGRES_URL, postgresReachable, postgresSchema, tempDir } from '../../helpers/databases.js';
import { spawnProcess, type ClusterProcess } from '../../helpers/cluster.js';
import { ADMIN_TOKEN } from '../../helpers/harness.js';

const INVALID = { error: { message: 'Invalid credentials', type: 'authentication_error', code: 'invalid_api_key', param: null } };
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

async function post(baseUrl: string, path: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const files = (baseUrl: string, key: string) => fetch(`${baseUrl}/v1/files`, { headers: { 'x-api-key': key } });

describe.runIf(await postgresReachable())('key revocation across replicas on PostgreSQL', () => {
  const replicas: ClusterProcess[] = [];
  const names: string[] = [];
  let drop: () => Promise<void>;
  let probe: pg.Client;

  beforeAll(async () => {
    const schema = await postgresSchema();
    drop = schema.drop;
    probe = new pg.Client({ connectionString: POSTGRES_URL });
    await probe.connect();
    for (const replica of ['a', 'b']) {
      const name = `sluice-revocation-${replica}-${process.pid}`;
      names.push(name);
      replicas.push(
        await spawnProcess('replica', {
          DATABASE_URL: `${schema.url}&application_name=${name}`,
          DATA_DIR: tempDir(),
          SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
          AUTH_CACHE_TTL_MS: '60000',
          SLUICE_WORKERS: 'off',
        }),
      );
    }
    // Each replica's feed is listening (until then it keeps lookups at most 1 s).
    for (const name of names) {
      for (;;) {
        const { rowCount } = await probe.query(`select 1 from pg_stat_activity where application_name = $1 and query = 'listen sluice_key_revoked'`, [name]);
        if (rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }, 120_000);

  afterAll(async () => {
    for (const replica of replicas) {
      replica.child.kill('SIGTERM');
      await replica.exited;
    }
    await probe?.end();
    await drop?.();
  });

  it('the other replica refuses a revoked key it has cached, long before its cache would expire', async () => {
    const [a, b] = replicas.map((r) => r.baseUrl!) as [string, string];
    const project = await post(a, '/admin/v1/projects', { name: 'revocation' });
    const created = await post(a, `/admin/v1/projects/${project.id as string}/keys`, { name: 'k' });
    const key = created.key as string;
    // Both replicas now hold the key's lookup, for 60 s.
    expect((await files(a, key)).status).toBe(200);
    expect((await files(b, key)).status).toBe(200);
    expect((await files(b, key)).status).toBe(200);

    await post(a, `/admin/v1/keys/${created.id as string}/revoke`);
    const onA = await files(a, key);
    expect(onA.status).toBe(403);
    expect(await onA.json()).toEqual(INVALID);
    // The notification is delivered once the revocation commits; poll the other replica until it refuses.
    let onB = await files(b, key);
    while (onB.status === 200) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      onB = await files(b, key);
    }
    expect(onB.status).toBe(403);
    expect(await onB.json()).toEqual(INVALID);
  }, 30_000);
});
