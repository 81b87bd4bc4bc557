/**
 * Runs the real Claude Code CLI (`claude -p`, installed on demand by agent-cli.ts) against a
 * base URL on loopback, in a throw-away HOME, config folder and working folder, and kept off
 * the network:
 * - `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, `DISABLE_TELEMETRY=1` and
 *   `DISABLE_AUTOUPDATER=1`: with these, Claude Code 2.1.337 in `-p` mode opens one socket,
 *   to the base URL (checked with strace: no DNS, no telemetry, no `HEAD /api/hello`, no
 *   `/v1/models`, no `count_tokens`);
 * - `HTTPS_PROXY`/`HTTP_PROXY` point at a refused loopback port, with loopback exempt, so a
 *   later version's new background call fails at once instead of leaving the machine;
 * - the environment is built from nothing: no key or setting of the machine's user leaks in.
 *
 *   const claude = await claudeCodeBinary();   // null: not installable here, skip
 *   const run = await runClaudeCode(claude, { baseUrl, authToken: key, prompt: 'Create a.txt', cwd });
 *   run.code; run.stdout; run.stderr
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentCli } from './agent-cli.js';
import { refusedPort } from './refused-port.js';

/**
 * The CLI's binary, installed into the cache when missing; null when it cannot be installed
 * (no registry on a network-closed machine), so a suite can skip. With
 * SLUICE_TEST_REQUIRE_AGENT_CLIS=1 (set by CI) a failed install is an error: the tests must
 * run there.
 */
export async function claudeCodeBinary(): Promise<string | null> {
  try {
    return await agentCli('claude-code');
  } catch (error) {
    if (process.env.SLUICE_TEST_REQUIRE_AGENT_CLIS === '1') throw error;
    return null;
  }
}

export interface ClaudeCodeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ClaudeCodeOptions {
  /** What `ANTHROPIC_BASE_URL` is set to: the server's root, without `/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer` (`ANTHROPIC_AUTH_TOKEN`). */
  authToken?: string;
  /** Sent as `x-api-key` (`ANTHROPIC_API_KEY`). */
  apiKey?: string;
  prompt: string;
  /** The working folder the agent edits. */
  cwd: string;
  /** More environment, e.g. `ANTHROPIC_MODEL` or the `ANTHROPIC_DEFAULT_*_MODEL` tiers. */
  env?: Record<string, string>;
  /** More arguments after `-p <prompt> --dangerously-skip-permissions`. */
  args?: string[];
  /** Killed after this long (default 120 s; the CLI starts slowly on a busy machine). */
  timeoutMs?: number;
}

export async function runClaudeCode(binary: string, options: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const home = mkdtempSync(join(tmpdir(), 'sluice-claude-home-'));
  const proxy = `http://127.0.0.1:${await refusedPort()}`;
  const env: Record<string, string> = {
    // The folder of the Node running the tests first: Claude Code's hooks and tools may run `node`.
    PATH: [dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    TMPDIR: tmpdir(),
    // --dangerously-skip-permissions refuses to run as root outside a sandbox without it.
    IS_SANDBOX: '1',
    ANTHROPIC_BASE_URL: options.baseUrl,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    NO_PROXY: '127.0.0.1,localhost',
    ...(options.authToken !== undefined ? { ANTHROPIC_AUTH_TOKEN: options.authToken } : {}),
    ...(options.apiKey !== undefined ? { ANTHROPIC_API_KEY: options.apiKey } : {}),
    ...options.env,
  };
  const args = ['-p', options.prompt, '--dangerously-skip-permissions', ...(options.args ?? [])];
  const child = spawn(binary, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    return { code, signal, stdout, stderr };
  } finally {
    clearTimeout(timer);
    rmSync(home, { recursive: true, force: true });
  }
}
