/**
 * How the server (`src/main.ts`) and the worker (`src/worker-main.ts`) start when run as
 * scripts: each module is also imported (by the CLI, by tests), so it starts only when it
 * is the process's entry script, and a start-up failure is one line and an exit code.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, databaseConfigOrNull } from './config/load.js';
import { describeStartupFailure } from './storage/db/connect-errors.js';
import { ListenError } from './listen-errors.js';

/** Whether a module is the process's entry script (also through symlinks, e.g. npm's bin links, and paths with spaces). */
export function isEntryPoint(moduleUrl: string): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/** Runs `start` when `moduleUrl` is the entry script; a failure prints what went wrong (no stack for a known cause) and exits. */
export function startIfEntryPoint(moduleUrl: string, start: () => Promise<void>): void {
  if (!isEntryPoint(moduleUrl)) return;
  start().catch((err) => {
    if (err instanceof ListenError) {
      console.error(err.message);
      process.exit(err.exitCode);
    }
    // What only the assembled app can check of the configuration (e.g. batches.endpoints), as loadConfigOrExit answers the rest.
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78);
    }
    const failure = describeStartupFailure(err, databaseConfigOrNull());
    console.error(failure?.message ?? err);
    process.exit(failure?.exitCode ?? 1);
  });
}
