/**
 * Sluice as built (dist/, made by `npm ci`'s prepare script and `npm run build`): what
 * operators run, and what tests that start Sluice's own entry points as processes run.
 * Through tsx each start cost about twice the CPU: `.bin/tsx` starts a second Node
 * process, and every source module is compiled again in each. A checkout whose sources
 * changed since the last build is built again first: once per test run, by
 * test/global-setup.ts, before any worker starts (so no two build at once).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '../..');

/** The newest modification time under `dir`, in ms. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

let built = false;

/** Builds dist unless it is newer than every file under src/. */
export function ensureBuilt(): void {
  if (built) return;
  const main = path.join(REPO, 'dist/src/main.js');
  if (!existsSync(main) || statSync(main).mtimeMs < newest(path.join(REPO, 'src'))) {
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: REPO, encoding: 'utf8', timeout: 300_000 });
    if (build.status !== 0) throw new Error(`npm run -s build failed: ${build.stdout}${build.stderr}`);
  }
  built = true;
}

export type Entry = 'src/main.ts' | 'src/worker-main.ts' | 'src/cli/main.ts';

/** The built file of an entry point (under `root`, a path to the checkout, when given), built first if stale. */
export function builtEntry(entry: Entry, root = REPO): string {
  ensureBuilt();
  return path.join(root, 'dist', entry.replace(/\.ts$/, '.js'));
}
