/** Runs the built `sluice` command (test/helpers/built.ts) as a separate process, in `cwd` with `env` over the test's own environment. */
import { spawn, spawnSync } from 'node:child_process';
import { builtEntry } from './built.js';

export { REPO } from './built.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runSluice(args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): CliResult {
  const result = spawnSync(process.execPath, [builtEntry('src/cli/main.ts'), ...args], {
    cwd: options.cwd,
    env: { ...process.env, LOG_LEVEL: 'silent', SLUICE_CONFIG: '', ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without blocking the test's event loop: for commands that call fakes served by the test process itself. */
export function runSluiceAsync(args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtEntry('src/cli/main.ts'), ...args], {
      cwd: options.cwd,
      env: { ...process.env, LOG_LEVEL: 'silent', SLUICE_CONFIG: '', ...options.env },
      timeout: options.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
