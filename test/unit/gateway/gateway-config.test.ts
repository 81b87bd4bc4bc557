/** Gateway configuration: env and YAML twins, secrets from a file, problems that never show a secret. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../../src/config/load.js';
import { tempDir } from '../../helpers/databases.js';

const SECRET = 'gwsec_0123456789abcdef';

function load(env: Record<string, string>, yaml?: string) {
  const dir = tempDir('sluice-gw-config-');
  if (yaml !== undefined) {
    writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
    env = { ...env, SLUICE_CONFIG: 'sluice.yaml' };
  }
  return { dir, config: () => loadConfig(env, dir) };
}

function problems(env: Record<string, string>, yaml?: string): string[] {
  try {
    load(env, yaml).config();
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('gateway config', () => {
  it('is off with no secrets, with the documented defaults', () => {
    const { gateway } = load({}).config();
    expect(gateway.signingSecrets.size).toBe(0);
    expect(gateway).toMatchObject({ apiUrl: null, checkTimeoutMs: 1500, toleranceSeconds: 300, intermediaryId: 'default', allowanceCacheMs: 0 });
  });

  it('reads GATEWAY_* variables', () => {
    const { gateway } = load({
      GATEWAY_SIGNING_SECRETS: JSON.stringify({ k1: SECRET, k2: `${SECRET}2` }),
      GATEWAY_API_URL: 'http://127.0.0.1:9/',
      GATEWAY_READ_KEY: 'rk',
      GATEWAY_WRITE_KEY: 'wk',
      GATEWAY_CHECK_TIMEOUT_MS: '250',
      GATEWAY_TOLERANCE_SECONDS: '60',
    }).config();
    expect([...gateway.signingSecrets]).toEqual([['k1', SECRET], ['k2', `${SECRET}2`]]);
    expect(gateway).toMatchObject({ apiUrl: 'http://127.0.0.1:9', readKey: 'rk', writeKey: 'wk', checkTimeoutMs: 250, toleranceSeconds: 60 });
  });

  it('reads the YAML twins, and secrets from a file', () => {
    const dir = tempDir('sluice-gw-secrets-');
    writeFileSync(path.join(dir, 'secrets.json'), JSON.stringify({ k3: SECRET }));
    const yaml = `gateway:\n  signing_secrets_file: ${path.join(dir, 'secrets.json')}\n  api_url: http://127.0.0.1:9\n  check_timeout_ms: 700\n  tolerance_seconds: 120\n  allowance_cache_ms: 2000\n`;
    const { gateway } = load({}, yaml).config();
    expect([...gateway.signingSecrets]).toEqual([['k3', SECRET]]);
    expect(gateway).toMatchObject({ checkTimeoutMs: 700, toleranceSeconds: 120, allowanceCacheMs: 2000 });
    const inline = load({}, `gateway:\n  signing_secrets:\n    k4: ${SECRET}\n  api_url: http://127.0.0.1:9\n`).config();
    expect([...inline.gateway.signingSecrets]).toEqual([['k4', SECRET]]);
  });

  it('names what is wrong without showing a secret', () => {
    const found = problems({ GATEWAY_SIGNING_SECRETS: `{"k1": "short"}`, GATEWAY_API_URL: 'http://x' });
    expect(found).toEqual(['GATEWAY_SIGNING_SECRETS: the secret of key id k1 must be a string of at least 16 characters']);
    expect(problems({ GATEWAY_SIGNING_SECRETS: `not json ${SECRET}` })[0]).toBe('GATEWAY_SIGNING_SECRETS: must be a JSON object {"<kid>": "<secret>", …}');
    expect(problems({ GATEWAY_SIGNING_SECRETS: JSON.stringify({ k1: SECRET }) })).toEqual([
      'GATEWAY_API_URL (gateway.api_url): required when signing secrets are set (the intermediary to check allowances with)',
    ]);
    expect(problems({ GATEWAY_TOLERANCE_SECONDS: '0' })).toEqual(['GATEWAY_TOLERANCE_SECONDS: must be a positive integer, got "0"']);
    for (const p of [...found, ...problems({ GATEWAY_SIGNING_SECRETS: `not json ${SECRET}` })]) expect(p).not.toContain(SECRET);
  });

  it('the start-up summary names key ids, never secrets or keys', () => {
    const config = load({ GATEWAY_SIGNING_SECRETS: JSON.stringify({ k1: SECRET }), GATEWAY_API_URL: 'http://127.0.0.1:9', GATEWAY_READ_KEY: 'read-key-secret' }).config();
    const summary = JSON.stringify(describeConfig(config));
    expect(summary).toContain('key ids k1');
    expect(summary).not.toContain(SECRET);
    expect(summary).not.toContain('read-key-secret');
  });
});
