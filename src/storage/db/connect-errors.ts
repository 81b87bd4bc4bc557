/**
 * A database that cannot be reached or refuses Sluice at start-up, as one line for the
 * operator (what failed, which URL with the password masked, what to try) and the exit
 * code a service manager understands: 78 (EX_CONFIG) when DATABASE_URL is wrong, 69
 * (EX_UNAVAILABLE) when the server is not there. Anything else is not recognised (null).
 */
import type { DatabaseConfig } from '../../config/schema.js';

export interface StartupFailure {
  message: string;
  exitCode: number;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** The URL without its password (`****`), or the text unchanged when it does not parse. */
export function maskDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:****@');
  }
}

function hintFor(code: string): { hint: string; exitCode: number } | null {
  if (UNREACHABLE.has(code)) return { hint: 'is PostgreSQL running and reachable at that host and port?', exitCode: 69 };
  // SQLSTATE class 28: no user, unknown role, wrong password.
  if (code.startsWith('28')) {
    return { hint: 'put a user PostgreSQL knows (and its password) in DATABASE_URL, e.g. postgres://sluice:secret@host:5432/sluice', exitCode: 78 };
  }
  if (code === '3D000') return { hint: 'create that database or fix its name in DATABASE_URL', exitCode: 78 };
  return null;
}

export function describeStartupFailure(err: unknown, database: DatabaseConfig | null): StartupFailure | null {
  if (!database || database.kind !== 'postgres' || !(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  const known = hintFor(code);
  if (!known) return null;
  return {
    message: `error: cannot use the database at ${maskDatabaseUrl(database.url)}: ${err.message || code}; ${known.hint}`,
    exitCode: known.exitCode,
  };
}
