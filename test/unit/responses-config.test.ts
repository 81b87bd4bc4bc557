/** `responses.hosted_tools` and `responses.reasoning_keys`, with their environment twins; `responses.websocket`. */
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

describe('responses.websocket', () => {
  it('defaults: the body limit, 10 minutes idle, 60 minutes of age, 16 sockets per key; the file sets each', () => {
    expect(load(null).responses.websocket).toEqual({ maxMessageBytes: 10 * 1024 * 1024, idleTimeoutMs: 600_000, maxAgeMs: 3_600_000, maxPerKey: 16 });
    expect(load('server:\n  body_limit_mb: 2\n').responses.websocket.maxMessageBytes).toBe(2 * 1024 * 1024);
    const set = load('responses:\n  websocket: { max_message_bytes: 4096, idle_timeout_seconds: 30, max_age_seconds: 120, max_per_key: 2 }\n');
    expect(set.responses.websocket).toEqual({ maxMessageBytes: 4096, idleTimeoutMs: 30_000, maxAgeMs: 120_000, maxPerKey: 2 });
  });

  it('refuses a limit below 1 and an unknown key, naming them', () => {
    expect(problemsOf('responses:\n  websocket: { max_per_key: 0 }\n').join('\n')).toMatch(/responses\.websocket\.max_per_key/);
    expect(problemsOf('responses:\n  websocket: { max_sockets: 3 }\n').join('\n')).toMatch(/responses\.websocket/);
  });
});
