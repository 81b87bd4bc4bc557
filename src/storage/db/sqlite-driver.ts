/**
 * Which better-sqlite3 the embedded database loads. Sluice depends on better-sqlite3 13:
 * it ships prebuilt Node-API binaries in its package (no compiler at install) and is the
 * first line that runs on Node 24, where 12 aborts the process when a statement is
 * garbage-collected. 13 needs Node 22 (on Node 20 it crashes), so on Node 20 the database
 * loads better-sqlite3 12 instead, which `deploy/sqlite-for-node20.mjs` builds from source
 * beside the dependencies (`npm ci` runs it through `prepare`, only on Node 20).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type SQLite from 'better-sqlite3';

/** The first Node major that better-sqlite3 13 runs on. */
export const SQLITE_13_NODE_MAJOR = 22;

/** Where deploy/sqlite-for-node20.mjs installs better-sqlite3 12, under node_modules. */
export const NODE20_SQLITE_FOLDER = '.sluice-node20';

const requireHere = createRequire(import.meta.url);

export const NODE20_SQLITE_MISSING =
  'Node 20 needs better-sqlite3 12 for the embedded SQLite database (13 requires Node 22): ' +
  "run `node deploy/sqlite-for-node20.mjs` in Sluice's folder (npm ci does it on Node 20), or use Node 22 or later";

export interface SqliteDriver {
  Database: typeof SQLite;
  /** The module's resolved path, for a worker thread that opens its own connection. */
  modulePath: string;
}

let driver: SqliteDriver | null = null;

function modulePathFor(nodeMajor: number): string {
  const current = requireHere.resolve('better-sqlite3');
  if (nodeMajor >= SQLITE_13_NODE_MAJOR) return current;
  // node_modules/better-sqlite3/lib/index.js → node_modules/.sluice-node20/node_modules/better-sqlite3
  const nodeModules = path.resolve(path.dirname(requireHere.resolve('better-sqlite3/package.json')), '..');
  const legacy = path.join(nodeModules, NODE20_SQLITE_FOLDER, 'node_modules', 'better-sqlite3');
  if (!existsSync(path.join(legacy, 'build', 'Release', 'better_sqlite3.node'))) throw new Error(NODE20_SQLITE_MISSING);
  return requireHere.resolve(legacy);
}

/** better-sqlite3 for the Node running this process (loaded once). */
export function sqliteDriver(): SqliteDriver {
  if (!driver) {
    const modulePath = modulePathFor(Number(process.versions.node.split('.')[0]));
    driver = { Database: requireHere(modulePath) as typeof SQLite, modulePath };
  }
  return driver;
}
