/** A bedrock model's deployments in sluice.yaml: a region each, Bedrock's endpoint by default, `base_url` as an override; refusals with their path. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/databases.js';

function load(yaml: string) {
  const dir = tempDir('sluice-bedrock-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ SLUICE_CONFIG: 'sluice.yaml' }, dir);
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

describe('bedrock deployments', () => {
  it('reads a region per deployment: Bedrock\'s regional endpoint by default, base_url when given', () => {
    const config = load(`models:
  claude:
    kind: chat
    price: { input_per_million_usd: 0, output_per_million_usd: 0 }
    upstream:
      protocol: bedrock
      deployments:
        - { region: us-east-1, upstream_model: 'anthropic.claude-x-v1:0' }
        - { id: west, region: us-west-2, base_url: 'https://vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com/', upstream_model: 'anthropic.claude-x-v1:0' }
`);
    const binding = config.models.claude!.binding;
    expect(binding.upstream?.protocol).toBe('bedrock');
    expect(binding.deployments.map((d) => [d.id, d.region, d.baseUrl, d.upstreamModel])).toEqual([
      ['claude#1', 'us-east-1', 'https://bedrock-runtime.us-east-1.amazonaws.com', 'anthropic.claude-x-v1:0'],
      ['west', 'us-west-2', 'https://vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com', 'anthropic.claude-x-v1:0'],
    ]);
  });

  it('refuses a bedrock deployment without a region, a region on another protocol, and a deployment with neither base_url nor region', () => {
    expect(
      problemsOf(`models:
  claude:
    kind: chat
    price: { input_per_million_usd: 0, output_per_million_usd: 0 }
    upstream: { protocol: bedrock, deployments: [{ base_url: 'http://127.0.0.1:1' }] }
  local:
    kind: chat
    deployments: [{ base_url: 'http://127.0.0.1:2/v1', region: us-east-1 }, { upstream_model: x }]
`),
    ).toEqual([
      'models.claude.upstream.deployments[0].region: required by the bedrock protocol (e.g. us-east-1)',
      'models.local.deployments[0].region: only a regional protocol (bedrock) has regions; openai engines are named by base_url',
      'models.local.deployments[1]: give its base_url (or, for bedrock, its region)',
    ]);
  });

  it('refuses a bedrock model given as a base_url shorthand', () => {
    expect(problemsOf(`models:\n  claude:\n    kind: chat\n    upstream: { protocol: bedrock }\n    base_url: 'http://127.0.0.1:1'\n`)).toContain(
      'models.claude.base_url: a bedrock model lists its deployments under upstream.deployments, each with its region',
    );
  });
});
