/**
 * `sluice providers check` against fakes on loopback: a fake Bedrock (SigV4 checked, a
 * list of the models it knows) and a fake OpenAI-compatible engine. One cheap request
 * per deployment; what failed said in words; a non-zero exit when anything failed; the
 * AWS secret key in no output.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSluiceAsync } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/databases.js';
import { deadEngineUrl } from '../../helpers/engine-process.js';
import { startFakeBedrock, TEST_AWS, TEST_AWS_ENV, type FakeBedrock } from '../../helpers/fake-bedrock.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';

let bedrock: FakeBedrock;
let engine: FakeUpstream;

beforeAll(async () => {
  [bedrock, engine] = await Promise.all([startFakeBedrock({ knownModels: ['anthropic.claude-good-v1:0'] }), startFakeUpstream()]);
});
afterAll(async () => {
  await Promise.all([bedrock?.close(), engine?.close()]);
});

const AWS_ENV = { ...TEST_AWS_ENV, AWS_CONFIG_FILE: '/nonexistent/aws-config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials' };

const bedrockModel = (id: string, model: string, url = bedrock.url, [input, output] = [0, 0]) => `  ${id}:
    kind: chat
    price: { input_per_million_usd: ${input}, output_per_million_usd: ${output} }
    upstream:
      protocol: bedrock
      deployments:
        - { id: ${id}-use1, region: us-east-1, base_url: ${url}, upstream_model: '${model}' }
`;

async function sluice(args: string[], models: string, env: Record<string, string> = AWS_ENV) {
  const dir = tempDir('sluice-providers-');
  const file = path.join(dir, 'sluice.yaml');
  writeFileSync(file, `models:\n${models}`);
  return runSluiceAsync(args, { cwd: dir, env: { DATA_DIR: dir, SLUICE_CONFIG: file, ...env } });
}

const check = (models: string, env?: Record<string, string>) => sluice(['providers', 'check'], models, env);

describe('sluice models list', { timeout: 120_000 }, () => {
  it('shows a bedrock model\'s protocol, price, readiness and each deployment with its region', async () => {
    const models = bedrockModel('claude', 'anthropic.claude-good-v1:0', bedrock.url, [3, 15]);
    const result = await sluice(['models', 'list', '--json'], models);
    expect(result.status).toBe(0);
    const row = (JSON.parse(result.stdout) as Array<Record<string, unknown>>).find((r) => r.id === 'claude');
    expect(row).toEqual({
      id: 'claude',
      task: 'chat',
      backend: 'bedrock',
      ready: true,
      price: { input_per_million_usd: 3, output_per_million_usd: 15 },
      detail: `upstream ${bedrock.url}`,
      deployments: [{ id: 'claude-use1', region: 'us-east-1', state: 'ready' }],
    });
  });
});

describe('sluice providers check', { timeout: 120_000 }, () => {
  it('passes when every deployment answers: exit 0, a table on stdout, progress on stderr', async () => {
    bedrock.reset();
    const result = await check(`${bedrockModel('claude', 'anthropic.claude-good-v1:0')}  local:\n    kind: chat\n    base_url: ${engine.baseUrl}\n    upstream_model: fake-model\n`);
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n').map((l) => l.split(/\s{2,}/))).toEqual([
      ['MODEL', 'DEPLOYMENT', 'PROTOCOL', 'RESULT'],
      ['claude', 'claude-use1', 'bedrock', 'ok'],
      ['local', 'local', 'openai', 'ok'],
      [''],
    ]);
    expect(result.stderr).toContain('claude claude-use1 (bedrock): ok\n');
    expect(result.stderr).toContain('local local (openai): ok\n');
    // One cheap call: a one-token Converse, signed.
    expect(bedrock.requests).toHaveLength(1);
    expect(bedrock.requests[0]!.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'ping' }] }], inferenceConfig: { maxTokens: 1 } });
  });

  it('says what failed, in words, and exits 1: an unknown model, an unreachable engine, a model the engine does not serve', async () => {
    const dead = await deadEngineUrl();
    const result = await check(
      `${bedrockModel('ghost', 'anthropic.claude-ghost-v9:0')}${bedrockModel('cold', 'anthropic.claude-good-v1:0', dead.replace(/\/v1$/, ''))}  down:\n    kind: chat\n    base_url: ${dead}\n  wrong:\n    kind: chat\n    base_url: ${engine.baseUrl}\n    upstream_model: other-model\n`,
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('ghost ghost-use1 (bedrock): FAILED: unknown model: Upstream for model ghost: bedrock has no model anthropic.claude-ghost-v9:0 in us-east-1');
    expect(result.stderr).toContain('down down (openai): FAILED: unreachable: ECONNREFUSED\n');
    expect(result.stderr).toContain('wrong wrong (openai): FAILED: unknown model: the engine does not serve other-model (it serves fake-model)\n');
    expect(result.stderr).toContain('cold cold-use1 (bedrock): FAILED: unreachable: Upstream for model cold is unreachable or closed the connection (ECONNREFUSED)\n');
    expect(result.stderr).toContain('error: 4 of 4 deployments failed the check\n');
  });

  it('says that Bedrock refused the credentials, without the secret', async () => {
    const wrongSecret = 'not/the/right/secret/key/0000000000000000';
    const result = await check(bedrockModel('claude', 'anthropic.claude-good-v1:0'), { ...AWS_ENV, AWS_SECRET_ACCESS_KEY: wrongSecret });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("claude claude-use1 (bedrock): FAILED: bad credentials: Upstream for model claude refused Sluice's AWS credentials (bedrock InvalidSignatureException");
    expect(result.stdout + result.stderr).not.toContain(wrongSecret);
    expect(result.stdout + result.stderr).not.toContain(TEST_AWS.secretAccessKey);
  });

  it('says that no AWS credentials were found', async () => {
    const result = await check(bedrockModel('claude', 'anthropic.claude-good-v1:0'), { ...AWS_ENV, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: 'nonexistent-profile' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('claude claude-use1 (bedrock): FAILED: no AWS credentials found');
  });
});
