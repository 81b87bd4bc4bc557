/** The `sluice` CLI against the database directly: migrate, projects, keys, credits; keys work over HTTP. */
import { runSluice, runSluiceAsync } from '../helpers/cli.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/databases.js';
import { call, startTestServer, type TestServer } from '../helpers/harness.js';
import { PROBE, registerProbeRoutes } from '../helpers/probe-routes.js';

/** A key object's policy fields when it sets none. */
const NO_POLICY = { models: null, budget: null, rpm: null, tpm: null, expires_at: null, metadata: null, tags: null, previous_key_valid_until: null };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('sluice CLI', { timeout: 120_000 }, () => {
  const dataDir = tempDir('sluice-cli-');
  let server: TestServer;

  const sluiceIn = (dir: string, ...args: string[]) => runSluice(args, { cwd: dir, env: { DATA_DIR: dir, FREE_CREDITS_USD: '2' } });
  const sluice = (...args: string[]) => sluiceIn(dataDir, ...args);
  /** The same without blocking, for commands that do not depend on each other: they run at once. */
  const sluiceAsync = (...args: string[]) => runSluiceAsync(args, { cwd: dataDir, env: { DATA_DIR: dataDir, FREE_CREDITS_USD: '2' } });
  function sluiceJson(...args: string[]): any {
    const result = sluice(...args);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout);
  }

  afterAll(async () => server?.close());

  it('migrate applies the migrations, then reports the database up to date', () => {
    const fresh = tempDir('sluice-cli-');
    const first = sluiceIn(fresh, 'migrate');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^applied: 0001-foundation(, [\w-]+)*\n$/);
    const second = sluiceIn(fresh, 'migrate');
    expect(second.status).toBe(0);
    expect(second.stdout).toBe('database is up to date\n');
  });

  let projectId: string;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    // A server on the same database (no key cache), to see CLI changes over HTTP.
    server = await startTestServer({ env: { DATA_DIR: dataDir, AUTH_CACHE_TTL_MS: '0' }, extendApp: registerProbeRoutes });
  });

  it('projects create prints the project with the configured free credits', () => {
    const project = sluiceJson('projects', 'create', 'demo');
    expect(project).toEqual({ id: expect.stringMatching(UUID), object: 'project', name: 'demo', balance_usd: 2, created_at: expect.any(Number) });
    projectId = project.id;
    expect(sluiceJson('projects', 'show', projectId)).toEqual(project);
  });

  it('keys create prints the key once; it authenticates over HTTP', async () => {
    const created = sluiceJson('keys', 'create', projectId, '--name', 'ci');
    expect(created).toMatchObject({ object: 'api_key', project_id: projectId, name: 'ci', active: true, revoked_at: null });
    expect(created.key).toMatch(/^sk-sluice-[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 16));
    key = created.key;
    keyId = created.id;
    const res = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'principal', projectId, keyId });
  });

  it('keys list shows prefixes only', () => {
    const list = sluiceJson('keys', 'list', projectId);
    expect(list).toEqual([
      { id: keyId, object: 'api_key', project_id: projectId, name: 'ci', prefix: key.slice(0, 16), active: true, created_at: expect.any(Number), revoked_at: null, ...NO_POLICY },
    ]);
    expect(JSON.stringify(list)).not.toContain(key.slice(16));
  });

  it('credits grant adds and removes (negative amounts)', async () => {
    // The malformed amount is refused before the database is read: it runs beside the two grants.
    const refused = sluiceAsync('credits', 'grant', projectId, 'lots');
    expect(sluiceJson('credits', 'grant', projectId, '3.5').balance_usd).toBe(5.5);
    expect(sluiceJson('credits', 'grant', projectId, '-6').balance_usd).toBe(-0.5);
    const bad = await refused;
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe('error: amount-usd must be a number, got "lots"\n');
  });

  it('keys revoke marks the key inactive; HTTP then refuses it', async () => {
    const revoked = sluiceJson('keys', 'revoke', keyId);
    expect(revoked).toMatchObject({ id: keyId, active: false, revoked_at: expect.any(Number) });
    expect(revoked.key).toBeUndefined();
    const res = await call(server.baseUrl, 'GET', `${PROBE}/whoami`, { key });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('Invalid credentials');
  });

  it('reports unknown ids and usage errors with a non-zero exit code', async () => {
    const [missing, usage] = await Promise.all([sluiceAsync('keys', 'create', '00000000-0000-4000-8000-000000000000'), sluiceAsync('projects', 'create')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('error: Project not found: 00000000-0000-4000-8000-000000000000\n');
    expect(usage.status).not.toBe(0);
    expect(usage.stderr).toContain("missing required argument 'name'");
  });
});
