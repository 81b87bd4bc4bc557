/** `outbox.max_attempts` and its environment twin `OUTBOX_MAX_ATTEMPTS`. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/databases.js';

function load(yaml: string | null, env: Record<string, string> = {}) {
  const dir = tempDir('sluice-config-');
  if (yaml !== null) writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ ...env, ...(yaml === null ? {} : { SLUICE_CONFIG: 'sluice.yaml' }) }, dir);
}

const problemsOf = (yaml: string | null, env: Record<string, string> = {}) => {
  try {
    load(yaml, env);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
};

describe('outbox.max_attempts', () => {
  it('defaults to 10; the file sets it; the environment overrides the file', () => {
    expect(load(null).outbox).toEqual({ maxAttempts: 10 });
    expect(load('outbox:\n  max_attempts: 3\n').outbox).toEqual({ maxAttempts: 3 });
    expect(load('outbox:\n  max_attempts: 3\n', { OUTBOX_MAX_ATTEMPTS: '7' }).outbox).toEqual({ maxAttempts: 7 });
  });

  it('refuses anything but a positive integer, naming the key', () => {
    expect(problemsOf('outbox:\n  max_attempts: 0\n')).toEqual([
      'outbox.max_attempts: Expected integer to be greater or equal to 1 (delivery attempts of a settlement message before it is marked dead), got 0',
    ]);
    expect(problemsOf(null, { OUTBOX_MAX_ATTEMPTS: 'many' })).toEqual(['OUTBOX_MAX_ATTEMPTS: must be an integer at least 1, got "many"']);
    expect(problemsOf('outbox:\n  retries: 3\n')).toEqual(['outbox.retries: Unexpected property (unknown key)']);
  });
});
