/** `responses.hosted_tools` and `responses.reasoning_keys`, with their environment twins. */
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

const KEY_A = 'a-secret-of-enough-length';
const KEY_B = 'b-secret-of-enough-length';

describe('responses.hosted_tools', () => {
  it('defaults to drop; the file sets refuse; the environment overrides the file', () => {
    expect(load(null).responses.hostedTools).toBe('drop');
    expect(load('responses:\n  hosted_tools: refuse\n').responses.hostedTools).toBe('refuse');
    expect(load('responses:\n  hosted_tools: refuse\n', { RESPONSES_HOSTED_TOOLS: 'drop' }).responses.hostedTools).toBe('drop');
  });

  it('refuses anything else, naming the key', () => {
    expect(problemsOf(null, { RESPONSES_HOSTED_TOOLS: 'ignore' })).toEqual(['RESPONSES_HOSTED_TOOLS: must be drop or refuse, got "ignore"']);
    expect(problemsOf('responses:\n  hosted_tools: ignore\n')).toHaveLength(1);
    expect(problemsOf('responses:\n  hosted_tools: ignore\n')[0]).toMatch(/^responses\.hosted_tools: /);
  });
});

describe('responses.reasoning_keys', () => {
  it('none by default (one is generated in the data directory at first use); the file lists them; the environment, comma-separated, overrides', () => {
    expect(load(null).responses.reasoningKeys).toEqual([]);
    expect(load(`responses:\n  reasoning_keys: [${KEY_A}, ${KEY_B}]\n`).responses.reasoningKeys).toEqual([KEY_A, KEY_B]);
    expect(load(`responses:\n  reasoning_keys: [${KEY_A}]\n`, { RESPONSES_REASONING_KEYS: ` ${KEY_B} , ${KEY_A} ` }).responses.reasoningKeys).toEqual([KEY_B, KEY_A]);
  });

  it('refuses a key shorter than 16 characters without showing it', () => {
    const problems = problemsOf(null, { RESPONSES_REASONING_KEYS: `${KEY_A},short` });
    expect(problems).toEqual(['responses.reasoning_keys: each key must be at least 16 characters']);
  });
});
