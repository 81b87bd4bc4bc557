/**
 * `sluice config show` prints the configuration in force with every secret redacted: the
 * provider keys (from the environment or a file), the admin token, a database URL's
 * password, S3 credentials; what is not secret (base URLs, providers, prices) is shown.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSluice } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/databases.js';

const ANTHROPIC_KEY = 'sk-ant-api03-show-0123456789abcdef';
const GROQ_KEY = 'gsk_from_file_0123456789abcdef';
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';

describe('sluice config show', () => {
  it('shows the resolved configuration, every key and secret redacted', () => {
    const dir = tempDir('sluice-config-show-');
    writeFileSync(path.join(dir, 'groq.key'), `${GROQ_KEY}\n`);
    writeFileSync(
      path.join(dir, 'sluice.yaml'),
      `models:
  claude:
    provider: anthropic
    upstream_model: claude-sonnet-4-5
    api_key_env: SHOW_ANTHROPIC_KEY
  llama:
    provider: groq
    upstream_model: llama-3.3-70b-versatile
    api_key_file: groq.key
blobs:
  url: s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&force_path_style=true
  access_key_id: AKIASHOW
  secret_access_key: s3-secret-0123456789
`,
    );
    const result = runSluice(['config', 'show'], {
      cwd: dir,
      env: {
        SLUICE_CONFIG: 'sluice.yaml',
        DATA_DIR: dir,
        SHOW_ANTHROPIC_KEY: ANTHROPIC_KEY,
        SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
        DATABASE_URL: 'postgres://sluice:db-password-0123@127.0.0.1:5432/test',
      },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    for (const secret of [ANTHROPIC_KEY, GROQ_KEY, ADMIN_TOKEN, 'db-password-0123', 's3-secret-0123456789']) expect(result.stdout).not.toContain(secret);
    const shown = JSON.parse(result.stdout);
    expect(shown.models.claude.binding.upstream).toMatchObject({
      protocol: 'anthropic',
      deployments: [{ id: 'claude', baseUrl: 'https://api.anthropic.com/v1', provider: 'anthropic', apiKey: '[redacted]' }],
    });
    expect(shown.models.claude.binding.apiKey).toBe('[redacted]');
    expect(shown.models.llama.binding.deployments[0]).toMatchObject({ provider: 'groq', apiKey: '[redacted]' });
    expect(shown.models.claude.price).toMatchObject({ inputPerMillionUsd: 3, outputPerMillionUsd: 15 });
    expect(shown.adminToken).toBe('[redacted]');
    expect(JSON.stringify(shown.database)).toContain('postgres://sluice:redacted@127.0.0.1:5432/test');
  });
});
