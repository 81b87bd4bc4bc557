/**
 * `sluice providers check` on the hosted HTTP protocols: an Anthropic deployment's models
 * list with its key and `anthropic-version`, an Azure resource's at its own path with its
 * `api-key`; a refused key said in words, and the key in no output.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSluiceAsync } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/databases.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../helpers/fake-anthropic.js';
import { startFakeAzure, type FakeAzure } from '../../helpers/fake-azure.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';

const ANTHROPIC_KEY = 'sk-ant-api03-check-0123456789abcdef';
const WRONG_KEY = 'sk-ant-api03-wrong-9876543210fedcba';
const AZURE_KEY = 'azure-check-0123456789abcdef';
let anthropic: FakeAnthropic;
let engine: FakeUpstream;
let azure: FakeAzure;

beforeAll(async () => {
  [anthropic, engine] = await Promise.all([startFakeAnthropic(ANTHROPIC_KEY), startFakeUpstream()]);
  azure = await startFakeAzure(engine, { key: AZURE_KEY, token: 'unused-token' });
});
afterAll(async () => {
  await Promise.all([anthropic?.close(), azure?.close(), engine?.close()]);
});

describe('sluice providers check on hosted protocols', { timeout: 120_000 }, () => {
  it('checks each deployment with its own auth, says a refused key in words, and never prints a key', async () => {
    const dir = tempDir('sluice-check-hosted-');
    writeFileSync(
      path.join(dir, 'sluice.yaml'),
      `models:
  claude:
    provider: anthropic
    base_url: ${anthropic.baseUrl}
    upstream_model: claude-sonnet-4-5
    api_key_env: CHECK_ANTHROPIC_KEY
  claude-wrong:
    provider: anthropic
    base_url: ${anthropic.baseUrl}
    upstream_model: claude-sonnet-4-5
    api_key_env: CHECK_WRONG_KEY
  azure-gpt:
    provider: azure
    base_url: ${azure.baseUrl}
    upstream_model: fake-model
    api_key_env: CHECK_AZURE_KEY
    price: { input_per_million_usd: 1, output_per_million_usd: 1 }
`,
    );
    const result = await runSluiceAsync(['providers', 'check'], {
      cwd: dir,
      env: { DATA_DIR: dir, SLUICE_CONFIG: path.join(dir, 'sluice.yaml'), CHECK_ANTHROPIC_KEY: ANTHROPIC_KEY, CHECK_WRONG_KEY: WRONG_KEY, CHECK_AZURE_KEY: AZURE_KEY },
    });
    expect(result.stderr).toContain('claude claude (anthropic): ok\n');
    expect(result.stderr).toContain('azure-gpt azure-gpt (azure): ok\n');
    expect(result.stderr).toContain('claude-wrong claude-wrong (anthropic): FAILED: bad key: the engine refused it (status 401); check api_key_env or api_key_file\n');
    expect(result.status).toBe(1);
    expect(anthropic.requests.map((r) => [r.method, r.path, r.headers['anthropic-version']])).toEqual([
      ['GET', '/v1/models', '2023-06-01'],
      ['GET', '/v1/models', '2023-06-01'],
    ]);
    expect(azure.requests.map((r) => [r.path, r.headers['api-key']])).toEqual([['/openai/v1/models', AZURE_KEY]]);
    for (const key of [ANTHROPIC_KEY, WRONG_KEY, AZURE_KEY]) expect(result.stdout + result.stderr).not.toContain(key);
  });
});
