/**
 * The README's quick start, walked as written: the built server started with
 * `npm run -s start` (default address 127.0.0.1), the five lines of sluice.yaml from the
 * README pointing a model name of the user's choosing at an OpenAI-compatible engine (the
 * project's fake upstream stands in for Ollama), a project and a key made with the CLI,
 * and the first chat call through that name. Also what the front door promises around it:
 * the container files listen on every interface, and the README names nothing outside
 * the repository.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/databases.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { ensureBuilt, REPO } from '../../helpers/built.js';

const README = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const QUICK_START = README.slice(README.indexOf('<!-- section: quick start'), README.indexOf('<!-- end section: quick start -->'));

describe('the README quick start, walked as written', { timeout: 300_000 }, () => {
  let upstream: FakeUpstream;
  let server: ChildProcess;
  let baseUrl: string;
  let log = '';
  const dir = tempDir('sluice-newcomer-');
  const env: Record<string, string> = { ...(process.env as Record<string, string>), DATA_DIR: path.join(dir, 'data'), SLUICE_CONFIG: path.join(dir, 'sluice.yaml') };
  delete env.HOST;
  const npm = (args: string[]) => spawnSync('npm', ['run', '-s', ...args], { cwd: REPO, env, encoding: 'utf8', timeout: 120_000 });

  beforeAll(async () => {
    ensureBuilt();
    upstream = await startFakeUpstream();
    const yaml = /```yaml\n(models:\n[\s\S]*?)```/.exec(QUICK_START)![1]!;
    expect(yaml.trimEnd().split('\n')).toHaveLength(5);
    expect(yaml).toContain('http://127.0.0.1:11434/v1');
    writeFileSync(env.SLUICE_CONFIG!, yaml.replace('http://127.0.0.1:11434/v1', upstream.baseUrl));
    // Its own process group: npm, its shell and node end together.
    server = spawn('npm', ['run', '-s', 'start'], { cwd: REPO, env: { ...env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    baseUrl = await new Promise<string>((resolve, reject) => {
      server.stdout!.on('data', (d: Buffer) => {
        log += d.toString();
        const listening = /"msg":"Server listening at (http:\/\/[^"]+)"/.exec(log);
        if (listening) resolve(listening[1]!);
      });
      server.on('close', (code) => reject(new Error(`server exited ${code}: ${log}`)));
    });
  }, 300_000);
  afterAll(async () => {
    if (server?.pid && server.exitCode === null) {
      const closed = new Promise((resolve) => server.on('close', resolve));
      process.kill(-server.pid, 'SIGTERM');
      await closed;
    }
    await upstream?.close();
  }, 60_000);

  it('listens on 127.0.0.1 by default, and npm prints no banner into the log', () => {
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(log.split('\n')[0]).toMatch(/^\{"level":/);
  });

  it('creates a project and a key with the CLI, then answers the first chat call under the chosen name', async () => {
    const project = npm(['sluice', '--', 'projects', 'create', 'demo']);
    expect(project.stderr).toBe('');
    const { id } = JSON.parse(project.stdout) as { id: string };
    const created = npm(['sluice', '--', 'keys', 'create', id]);
    expect(created.stderr).toBe('');
    const { key } = JSON.parse(created.stdout) as { key: string };
    expect(key).toMatch(/^sk-sluice-/);

    const models = (await (await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain('my-llama');

    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'my-llama', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(response.status).toBe(200);
    const chat = (await response.json()) as { model: string; choices: { message: { content: string } }[] };
    expect(chat.model).toBe('my-llama');
    expect(chat.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(upstream.requests.at(-1)).toMatchObject({ path: '/chat/completions', body: { model: 'llama3.2:3b' } });
  });
});

describe('the front door around it', () => {
  it('the container files listen on every interface; the server alone does not', () => {
    expect(readFileSync(path.join(REPO, 'Dockerfile'), 'utf8')).toMatch(/^ENV .*\bHOST=0\.0\.0\.0\b/m);
    expect(readFileSync(path.join(REPO, 'compose.yaml'), 'utf8')).toMatch(/^ {2}HOST: 0\.0\.0\.0\b/m);
  });

  it('the quick start runs npm scripts with -s, so no banner lands in their output', () => {
    const runs = QUICK_START.match(/npm (run|start|test)\b[^\n]*/g) ?? [];
    expect(runs.length).toBeGreaterThanOrEqual(4);
    for (const run of runs) expect(run, run).toMatch(/^npm run -s /);
  });

  it('the README names no document outside the repository', () => {
    expect(README).not.toMatch(/\bthe spec\b|\bspec rule\b|\bdigest §|§\d/i);
  });
});
