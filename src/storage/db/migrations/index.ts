/**
 * Versioned migrations, in order. Add a file `NNNN-<what>.ts` exporting up/down and
 * list it here; names sort, and a name is never reused or edited after release.
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';

export const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': m0001,
};
