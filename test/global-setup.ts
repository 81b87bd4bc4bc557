/**
 * Before any test worker starts: dist is built if the sources changed since
 * (test/helpers/built.ts), and Node's compile cache is on for every process the run
 * starts (test workers, and the servers, workers and CLI commands they spawn), so each
 * does not compile the same modules again. Node 20 ignores the variable.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureBuilt } from './helpers/built.js';

export default function setup(): void {
  ensureBuilt();
  process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'sluice-test-compile-cache');
}
