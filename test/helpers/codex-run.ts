/**
 * Codex (the real CLI, agent-cli.ts) run once against a Sluice: `codex exec` with the
 * configuration a newcomer writes (a custom provider with `wire_api = "responses"`, its
 * `base_url` at Sluice, `env_key` for the key, no feature flags), in a temporary
 * CODEX_HOME and HOME, with every proxy variable pointing at a loopback proxy that
 * refuses and records whatever Codex tries to send off loopback (nothing reaches the
 * network). The run is killed after `timeoutMs`: a test never hangs on it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentCli } from './agent-cli.js';

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The working directory Codex ran in (removed by `cleanup`). */
  workdir: string;
  /** Where Codex tried to go off loopback (`CONNECT host:port` or `GET url`), refused. */
  offLoopback: string[];
  cleanup(): void;
}

/** A proxy on loopback that refuses every request and tunnel, and records each. */
async function refusingProxy(): Promise<{ url: string; attempts: string[]; close(): Promise<void> }> {
  const attempts: string[] = [];
  const server = http.createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403).end();
  });
  server.on('connect', (req, socket) => {
    attempts.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, attempts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface CodexRunOptions {
  /** Sluice's `/v1` base URL. */
  baseUrl: string;
  apiKey: string;
  model: string;
  prompt: string;
  /** Extra lines under `[model_providers.sluice]`. */
  providerLines?: string[];
  timeoutMs?: number;
}

export async function runCodex(options: CodexRunOptions): Promise<CodexRun> {
  const codex = await agentCli('codex');
  const root = mkdtempSync(join(tmpdir(), 'sluice-codex-'));
  const home = join(root, 'codex-home');
  const workdir = join(root, 'work');
  for (const dir of [home, workdir]) rmSync(dir, { recursive: true, force: true });
  await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(home), fs.mkdir(workdir)]));
  const config = [
    `model = "${options.model}"`,
    'model_provider = "sluice"',
    '',
    '[model_providers.sluice]',
    'name = "Sluice"',
    `base_url = "${options.baseUrl}"`,
    'wire_api = "responses"',
    'env_key = "SLUICE_API_KEY"',
    ...(options.providerLines ?? []),
  ];
  writeFileSync(join(home, 'config.toml'), `${config.join('\n')}\n`);
  const proxy = await refusingProxy();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    CODEX_HOME: home,
    SLUICE_API_KEY: options.apiKey,
    HTTP_PROXY: proxy.url,
    HTTPS_PROXY: proxy.url,
    ALL_PROXY: proxy.url,
    http_proxy: proxy.url,
    https_proxy: proxy.url,
    all_proxy: proxy.url,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    RUST_LOG: 'error',
  };
  const args = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--cd', workdir, options.prompt];
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(codex, args, { env, cwd: workdir, timeout: options.timeoutMs ?? 90_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
  await proxy.close();
  return { ...result, workdir, offLoopback: proxy.attempts, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
