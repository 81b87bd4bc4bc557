/** `sluice keys create|update|rotate` with policy flags, straight on the database; what they set is what the admin API shows. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSluice } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/databases.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

describe('sluice keys with a policy', { timeout: 120_000 }, () => {
  const dataDir = tempDir('sluice-keys-cli-');
  let server: TestServer;
  let projectId: string;
  // The server's own database (its DATA_DIR, or its schema under SLUICE_TEST_HTTP_ON_POSTGRES=1).
  const sluice = (...args: string[]) => runSluice(args, { cwd: dataDir, env: { ...server.dataEnv, DATA_DIR: dataDir } });
  function sluiceJson(...args: string[]): any {
    const result = sluice(...args);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout);
  }

  beforeAll(async () => {
    server = await startTestServer({ env: { DATA_DIR: dataDir } });
    expect(sluice('migrate').status).toBe(0);
    projectId = sluiceJson('projects', 'create', 'cli-governed').id;
  });
  afterAll(async () => server?.close());

  it('create sets every field; update changes and clears; rotate issues a new secret with a grace', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
    const created = sluiceJson(
      'keys', 'create', projectId, '--name', 'ops', '--models', 'small-*,fast', '--budget-usd', '2.5', '--budget-window', 'day',
      '--rpm', '30', '--tpm', '5000', '--expires-at', String(expiresAt), '--metadata', 'owner=ana', '--metadata', 'team=ml', '--tags', 'team:ml,cli',
    );
    expect(created).toMatchObject({
      name: 'ops', models: ['small-*', 'fast'], budget: { limit_usd: 2.5, window: 'day' }, rpm: 30, tpm: 5000, expires_at: expiresAt,
      metadata: { owner: 'ana', team: 'ml' }, tags: ['team:ml', 'cli'],
    });
    const listed = await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(listed.body.data[0]).toMatchObject({ id: created.id, models: ['small-*', 'fast'], rpm: 30 });

    const updated = sluiceJson('keys', 'update', created.id, '--rpm', '60', '--clear', 'budget,tags');
    expect(updated).toMatchObject({ name: 'ops', rpm: 60, budget: null, tags: null, tpm: 5000, models: ['small-*', 'fast'] });

    const rotated = sluiceJson('keys', 'rotate', created.id, '--grace-seconds', '600');
    expect(rotated.key).toMatch(/^sk-sluice-/);
    expect(rotated.key).not.toBe(created.key);
    expect(rotated.previous_key_valid_until - Math.floor(Date.now() / 1000)).toBeGreaterThan(590);
    for (const key of [created.key, rotated.key]) expect((await call(server.baseUrl, 'GET', '/v1/models', { key })).status).toBe(200);
  });

  it('refuses malformed flags with the field named, exit status 1', () => {
    const overlapping = sluice('keys', 'create', projectId, '--models', 'small-*,*-mini');
    expect(overlapping.status).toBe(1);
    expect(overlapping.stderr).toContain('models: "small-*" and "*-mini" overlap');
    const window = sluice('keys', 'create', projectId, '--budget-usd', '1');
    expect(window.status).toBe(1);
    expect(window.stderr).toContain('budget.window must be one of day, week, month, total, got null');
    const rpm = sluice('keys', 'create', projectId, '--rpm', 'lots');
    expect(rpm.stderr).toContain('rpm must be a whole number from 1 to 1000000, got "lots"');
    const grace = sluice('keys', 'rotate', 'key_x', '--grace-seconds', 'soon');
    expect(grace.stderr).toContain('grace_seconds must be a whole number from 0 to 2592000, got "soon"');
  });
});
