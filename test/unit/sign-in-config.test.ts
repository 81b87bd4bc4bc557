/** `sign_in.oidc`: resolved with its defaults, the client secret from the environment (redacted when shown), and bad values refused by key. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { redactedConfig } from '../../src/config/redacted.js';
import { tempDir } from '../helpers/databases.js';

const PROJECT = '6f1c2a9e-2b1d-4d0e-9a51-7c3e8b1f0a42';

function load(yaml: string, env: Record<string, string> = {}) {
  const dir = tempDir('sluice-config-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ SLUICE_CONFIG: 'sluice.yaml', ...env }, dir);
}

function problemsOf(yaml: string): string[] {
  try {
    load(yaml);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('sign_in.oidc', () => {
  it('is off by default, and resolves with its defaults and the secret from SLUICE_OIDC_CLIENT_SECRET, which config show redacts', () => {
    expect(load('{}\n').sign_in).toEqual({ oidc: null });
    const yaml = `sign_in:\n  oidc:\n    issuer: https://id.example.com\n    client_id: sluice\n    roles:\n      - { claim: groups, value: ml, project: ${PROJECT.toUpperCase()}, role: admin }\n`;
    const config = load(yaml, { SLUICE_OIDC_CLIENT_SECRET: 'oidc-secret-value' });
    expect(config.sign_in.oidc).toEqual({
      providerName: 'your identity provider',
      issuer: 'https://id.example.com',
      clientId: 'sluice',
      clientSecret: 'oidc-secret-value',
      scopes: ['openid', 'email', 'profile'],
      redirectUrl: null,
      operators: [],
      roles: [{ claim: 'groups', value: 'ml', project: PROJECT, role: 'admin' }],
      defaultRole: null,
    });
    const shown = JSON.stringify(redactedConfig(config));
    expect(shown).not.toContain('oidc-secret-value');
    expect((redactedConfig(config) as { sign_in: { oidc: { clientSecret: string } } }).sign_in.oidc.clientSecret).toBe('[redacted]');
  });

  it('refuses plain http off loopback, scopes without openid, and an unknown role, naming the key', () => {
    expect(problemsOf('sign_in:\n  oidc:\n    issuer: http://id.example.com\n    client_id: sluice\n    scopes: [email]\n')).toEqual([
      'sign_in.oidc.issuer: must be https (http only on loopback)',
      'sign_in.oidc.scopes: must include openid',
    ]);
    expect(problemsOf('sign_in:\n  oidc:\n    issuer: http://127.0.0.1:9000\n    client_id: sluice\n')).toEqual([]);
    const unknownRole = problemsOf(`sign_in:\n  oidc:\n    issuer: https://id.example.com\n    client_id: sluice\n    roles:\n      - { claim: groups, value: ml, project: ${PROJECT}, role: superuser }\n`);
    expect(unknownRole.length).toBeGreaterThan(0);
    expect(unknownRole.join('\n')).toContain('sign_in.oidc.roles.0.role');
  });
});
