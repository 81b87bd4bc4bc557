/** Spawns the built `src/worker-main.ts` (test/helpers/built.ts) as its own process, configured like a test server. */
import { spawn, type ChildProcess } from 'node:child_process';
import { builtEntry, REPO } from '../../../helpers/built.js';

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the process wrote, for diagnostics. */
  output(): string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnWorker(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [builtEntry('src/worker-main.ts')], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited, kill: (signal) => child.kill(signal) };
}
