#!/usr/bin/env node
// better-sqlite3 12 for Node 20. Sluice depends on better-sqlite3 13, which ships prebuilt
// Node-API binaries (nothing to compile) and runs on Node 22 and 24, but crashes on Node
// 20. On Node 20 only, this installs better-sqlite3 12 (the last line for Node 20; npm
// compiles it from source, several minutes on two cores) into
// node_modules/.sluice-node20, where src/storage/db/sqlite-driver.ts loads it from. On
// Node 22 and later it does nothing. `npm run prepare` runs it after `npm ci`; run it by
// hand after switching an installed tree to Node 20. Usage: node deploy/sqlite-for-node20.mjs
// Plain JavaScript, no dependencies: it runs where the dev dependencies are not installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const VERSION = '12.11.1';
const say = (line) => process.stderr.write(`sqlite-for-node20: ${line}\n`);

const major = Number(process.versions.node.split('.')[0]);
if (major >= 22) {
  say(`Node ${major} loads better-sqlite3 13's prebuilt binary; nothing to do`);
  process.exit(0);
}
const prefix = path.join(import.meta.dirname, '..', 'node_modules', '.sluice-node20');
const marker = path.join(prefix, 'built-for.json');
const built = path.join(prefix, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const wanted = { version: VERSION, abi: process.versions.modules };
if (existsSync(built) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === JSON.stringify(wanted)) {
  say(`better-sqlite3 ${VERSION} is already built for this Node (ABI ${wanted.abi})`);
  process.exit(0);
}
rmSync(prefix, { recursive: true, force: true });
say(`building better-sqlite3 ${VERSION} for Node ${process.versions.node} from source (several minutes)…`);
const started = Date.now();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const args = ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--omit=dev', `better-sqlite3@${VERSION}`];
const result = spawnSync(npm, args, { stdio: ['ignore', 'inherit', 'inherit'] });
if (result.status !== 0 || !existsSync(built)) {
  say('the build failed (it needs python3, make and a C++ compiler); Sluice cannot open SQLite on Node 20 without it');
  process.exit(1);
}
writeFileSync(marker, `${JSON.stringify(wanted)}\n`);
say(`built in ${Math.round((Date.now() - started) / 1000)} s`);
