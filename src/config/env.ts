/**
 * Reading typed values from environment variables, for the loader and the sections: each
 * reader pushes a problem naming the variable when its value is malformed, and answers
 * undefined for an unset or empty variable so the file's value or the default applies.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Env } from './section.js';

const range = (min: number, max: number): string =>
  max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;

export function envNumber(env: Env, name: string, problems: string[], min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    problems.push(`${name}: must be a number ${range(min, max)}, got "${raw}"`);
    return undefined;
  }
  return value;
}

export function envInteger(env: Env, name: string, problems: string[], min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!/^\s*[+-]?\d+\s*$/.test(raw) || value < min || value > max) {
    problems.push(`${name}: must be an integer ${range(min, max)}, got "${raw}"`);
    return undefined;
  }
  return value;
}

export function envBoolean(env: Env, name: string, problems: string[]): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  problems.push(`${name}: must be true or false, got "${raw}"`);
  return undefined;
}

/** A secret from `<NAME>_FILE` (a file holding it) or `<NAME>`; null when neither is set. */
export function envSecret(env: Env, name: string, cwd: string, problems: string[]): string | null {
  const fileName = env[`${name}_FILE`];
  if (fileName) {
    try {
      return readFileSync(path.resolve(cwd, fileName), 'utf8').trim() || null;
    } catch {
      problems.push(`${name}_FILE: cannot read ${fileName}`);
      return null;
    }
  }
  return env[name] ? env[name]! : null;
}
