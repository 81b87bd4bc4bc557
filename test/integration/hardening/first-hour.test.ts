/**
 * What a new operator meets first: listing projects (CLI and admin API, paginated), a
 * wrong DATABASE_URL as one line with the password masked and a sysexits code, a CLI
 * piped into `head`, a worker that does not claim to listen, and a quiet shutdown
 * when workers are off.
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/databases.js';
import { builtEntry } from '../../helpers/built.js';
import { runSluice } from '../../helpers/cli.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { loadConfig } from '../../../src/config/load.js';
import { assemble } from '../../../src/composition/features.js';
import { maskDatabaseUrl } from '../../../src/storage/db/connect-errors.js';

const CLI = builtEntry('src/cli/main.ts');

const sluice = (dir: string, args: string[], env: Record<string, string> = {}) => runSluice(args, { cwd: dir, env: { DATA_DIR: dir, ...env } });

describe('listing projects', { timeout: 120_000 }, () => {
  let server: TestServer;
  /** The three projects in the listing's order: newest first, ties (same millisecond) by id, descending. */
  let ordered: Array<{ id: string; name: string; createdAtMs: number }> = [];
  const admin = (pathName: string) => call(server.baseUrl, 'GET', `/admin/v1${pathName}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  beforeAll(async () => {
    server = await startTestServer();
    for (const name of ['one', 'two', 'three']) ordered.push(await server.core.projects.createProject(name));
    ordered = ordered.sort((a, b) => b.createdAtMs - a.createdAtMs || (b.id < a.id ? -1 : 1));
  });
  afterAll(() => server.close());

  it('GET /admin/v1/projects pages newest first with the list envelope', async () => {
    const first = await admin('/projects?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', has_more: true });
    expect(first.body.data.map((p: { id: string }) => p.id)).toEqual([ordered[0]!.id, ordered[1]!.id]);
    expect(first.body.data[0]).toEqual({
      id: ordered[0]!.id,
      object: 'project',
      name: ordered[0]!.name,
      balance_usd: expect.any(Number),
      created_at: expect.any(Number),
    });
    const second = await admin(`/projects?limit=2&after=${first.body.last_id}`);
    expect(second.body.data.map((p: { id: string }) => p.id)).toEqual([ordered[2]!.id]);
    expect(second.body.has_more).toBe(false);
  });

  it('refuses a bad limit or an unknown cursor in the envelope', async () => {
    expect((await admin('/projects?limit=0')).body.error.code).toBe('invalid_limit');
    const unknown = await admin('/projects?after=00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toEqual({
      message: 'after must be the id of a project, got "00000000-0000-4000-8000-000000000000"',
      type: 'invalid_request_error',
      code: 'invalid_cursor',
      param: 'after',
    });
  });

  it('sluice projects list prints the same page', () => {
    const dir = tempDir('sluice-cli-');
    expect(sluice(dir, ['projects', 'create', 'alpha']).status).toBe(0);
    expect(sluice(dir, ['projects', 'create', 'beta']).status).toBe(0);
    const listed = sluice(dir, ['projects', 'list', '--limit', '1']);
    expect(listed.stderr).toBe('');
    expect(listed.status).toBe(0);
    const page = JSON.parse(listed.stdout);
    expect(page).toMatchObject({ object: 'list', has_more: true, data: [{ name: 'beta' }] });
    const rest = JSON.parse(sluice(dir, ['projects', 'list', '--after', page.last_id]).stdout);
    expect(rest.data.map((p: { name: string }) => p.name)).toEqual(['alpha']);
  });
});

describe('a DATABASE_URL that does not work', { timeout: 120_000 }, () => {
  const dir = tempDir('sluice-db-');

  it('masks the password', () => {
    expect(maskDatabaseUrl('postgres://sluice:s3cret@db:5432/x')).toBe('postgres://sluice:****@db:5432/x');
    expect(maskDatabaseUrl('postgres://db:5432/x')).toBe('postgres://db:5432/x');
  });

  it.each([
    [
      'no user',
      'postgres://127.0.0.1:5432/test',
      78,
      /^error: cannot use the database at postgres:\/\/127\.0\.0\.1:5432\/test: .*user.*; put a user PostgreSQL knows \(and its password\) in DATABASE_URL, e\.g\. postgres:\/\/sluice:secret@host:5432\/sluice\n$/,
    ],
    [
      'an unknown role',
      'postgres://nobody:hunter2@127.0.0.1:5432/test',
      78,
      /^error: cannot use the database at postgres:\/\/nobody:\*\*\*\*@127\.0\.0\.1:5432\/test: role "nobody" does not exist; put a user/,
    ],
    [
      'a refused connection',
      'postgres://u:hunter2@127.0.0.1:9/test',
      69,
      /^error: cannot use the database at postgres:\/\/u:\*\*\*\*@127\.0\.0\.1:9\/test: connect ECONNREFUSED 127\.0\.0\.1:9; is PostgreSQL running and reachable at that host and port\?\n$/,
    ],
  ])('%s: one line, the password masked, a sysexits code', (_name, url, code, line) => {
    const result = sluice(dir, ['migrate'], { DATABASE_URL: url });
    expect(result.status).toBe(code);
    expect(result.stderr).toMatch(line);
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('process hygiene', { timeout: 120_000 }, () => {
  it('sluice models list into a closed pipe exits 0 without an EPIPE stack', async () => {
    const dir = tempDir('sluice-pipe-');
    const child = spawn(process.execPath, [CLI, 'models', 'list'], {
      cwd: dir,
      env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'silent', SLUICE_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy(); // like `head` that has already exited
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('sluice worker does not log a listen address', async () => {
    const dir = tempDir('sluice-worker-');
    const child = spawn(process.execPath, [CLI, 'worker'], {
      cwd: dir,
      env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'info', SLUICE_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('sluice worker started')) resolve();
      }),
    );
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('close', resolve));
    const started = out.split('\n').find((l) => l.includes('sluice worker started'))!;
    expect(JSON.parse(started).config).not.toHaveProperty('listen');
    expect(out).not.toContain('0.0.0.0:8080');
  });

  it('with workers off, closing the process does not report a batch runner stopping', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const dir = tempDir();
    const assembly = await assemble(loadConfig({ DATA_DIR: dir, SLUICE_WORKERS: 'off' }, dir), { logger: pino({ level: 'info' }, sink) });
    await assembly.close();
    expect(lines.join('')).not.toContain('batch runner stopped');
  });
});
