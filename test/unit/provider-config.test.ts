/**
 * Hosted providers in sluice.yaml: a preset sets the protocol, the base URL and the key's
 * header; the key comes from the environment or a file; a hosted model is priced from the
 * catalog (@pydantic/genai-prices) or sluice.yaml, and refused at start-up when neither
 * has its price; the two usage conventions (Anthropic's input excludes cached tokens,
 * OpenAI's includes them) bill the same tokens the same.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { catalogPrice } from '../../src/config/price-catalog.js';
import { costMicros } from '../../src/domain/shared/money.js';
import { ServedListener } from '../../src/domain/completions/served-call.js';
import type { TokenUsage } from '../../src/domain/models/inference-backend.port.js';
import { redactSecret } from '../../src/inference/upstream/errors.js';
import { readUsage as readAnthropicUsage } from '../../src/inference/upstream/protocols/anthropic/map-response.js';
import { readUsage as readOpenAIUsage } from '../../src/inference/upstream/protocols/openai/map-response.js';
import { tempDir } from '../helpers/databases.js';

function load(yaml: string, env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const dir = tempDir('sluice-providers-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  try {
    return { config: loadConfig({ ...env, SLUICE_CONFIG: 'sluice.yaml' }, dir), problems: [] as string[] };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { config: null, problems: err.problems };
  }
}

const model = (body: string) => `models:\n  m:\n    kind: chat\n${body}`;

describe('provider presets', () => {
  it.each([
    ['openai', 'gpt-4o', 'openai', 'https://api.openai.com/v1'],
    ['groq', 'llama-3.3-70b-versatile', 'openai', 'https://api.groq.com/openai/v1'],
    ['together', 'meta-llama/Llama-3.3-70B-Instruct-Turbo', 'openai', 'https://api.together.xyz/v1'],
    ['fireworks', 'accounts/fireworks/models/llama-v3p1-8b-instruct', 'openai', 'https://api.fireworks.ai/inference/v1'],
    ['deepseek', 'deepseek-chat', 'openai', 'https://api.deepseek.com/v1'],
    ['mistral', 'mistral-large-latest', 'openai', 'https://api.mistral.ai/v1'],
    ['openrouter', 'anthropic/claude-sonnet-4.5', 'openai', 'https://openrouter.ai/api/v1'],
    ['gemini', 'gemini-2.5-flash', 'openai', 'https://generativelanguage.googleapis.com/v1beta/openai'],
    ['anthropic', 'claude-sonnet-4-5', 'anthropic', 'https://api.anthropic.com/v1'],
  ])('%s sets the protocol and base URL; the key comes from api_key_env', (provider, upstream, protocol, baseUrl) => {
    const { config, problems } = load(model(`    provider: ${provider}\n    upstream_model: ${upstream}\n    api_key_env: PROVIDER_KEY\n    price: { input_per_million_usd: 1, output_per_million_usd: 2 }\n`), { PROVIDER_KEY: 'k-0123456789' });
    expect(problems).toEqual([]);
    const binding = config!.models.m!.binding;
    expect(binding.upstream).toMatchObject({ protocol, deployments: [{ id: 'm', baseUrl, provider, apiKey: 'k-0123456789', upstreamModel: upstream }] });
  });

  it('reads the key from api_key_file (its first line), relative to the working directory', () => {
    const { config, problems } = load(model('    provider: groq\n    upstream_model: llama-3.3-70b-versatile\n    api_key_file: groq.key\n'), {}, { 'groq.key': 'gsk-from-file-0123\nsecond line\n' });
    expect(problems).toEqual([]);
    expect(config!.models.m!.binding.deployments[0]!.apiKey).toBe('gsk-from-file-0123');
  });

  it('refuses a hosted provider without a key, an unset variable and an unreadable file, naming where, never a value', () => {
    const base = '    provider: anthropic\n    upstream_model: claude-sonnet-4-5\n';
    expect(load(model(base)).problems).toEqual(['models.m: a hosted provider needs its key: set api_key_env or api_key_file']);
    expect(load(model(`${base}    api_key_env: SLUICE_UNSET_KEY\n`)).problems).toEqual(['models.m.api_key_env: environment variable SLUICE_UNSET_KEY is not set']);
    const [missing] = load(model(`${base}    api_key_file: nowhere.key\n`)).problems;
    expect(missing).toMatch(/^models\.m\.api_key_file: cannot read .*nowhere\.key \(ENOENT\)$/);
  });

  it('azure needs its resource URL; api_version and auth: bearer reach the deployment', () => {
    expect(load(model('    provider: azure\n    upstream_model: gpt-4o\n    api_key_env: K\n'), { K: 'azure-0123456789' }).problems).toEqual([
      'models.m.base_url: required for provider azure (its resource\'s URL)',
    ]);
    const { config } = load(
      model('    provider: azure\n    base_url: https://r.openai.azure.com\n    upstream_model: prod\n    api_version: 2024-10-21\n    auth: bearer\n    api_key_env: K\n    price: { input_per_million_usd: 2.5, output_per_million_usd: 10 }\n'),
      { K: 'entra-token-0123' },
    );
    expect(config!.models.m!.binding.upstream).toMatchObject({ protocol: 'azure', deployments: [{ provider: 'azure', apiVersion: '2024-10-21', auth: 'bearer', baseUrl: 'https://r.openai.azure.com' }] });
  });

  it('refuses deployments whose providers speak another protocol than the model', () => {
    const yaml = model(`    deployments:
      - { id: a, provider: anthropic, upstream_model: claude-sonnet-4-5, api_key_env: K }
      - { id: b, provider: groq, upstream_model: llama-3.3-70b-versatile, api_key_env: K }
`);
    expect(load(yaml, { K: 'key-0123456789' }).problems).toEqual(["models.m: deployment b is provider groq, which speaks openai, but the model's engines speak anthropic"]);
  });
  it('refuses a key only another protocol reads, rather than ignoring it', () => {
    const yaml = model('    provider: groq\n    upstream_model: llama-3.3-70b-versatile\n    api_key_env: K\n    api_version: 2024-10-21\n    anthropic_beta: [x-2025]\n');
    expect(load(yaml, { K: 'key-0123456789' }).problems).toEqual([
      'models.m: api_version (deployment m) applies to the azure protocol only, not openai',
      'models.m: anthropic_beta (deployment m) applies to the anthropic protocol only, not openai',
    ]);
  });
});

describe('the price catalog', () => {
  it('prices a hosted model from the catalog, with its cache prices and context window', () => {
    const { config } = load(model('    provider: anthropic\n    upstream_model: claude-sonnet-4-5-20250929\n    api_key_env: K\n'), { K: 'key-0123456789' });
    expect(config!.models.m!.price).toEqual({ inputPerMillionUsd: 3, outputPerMillionUsd: 15, cachedInputPerMillionUsd: 0.3, cacheWritePerMillionUsd: 3.75 });
    expect(config!.models.m!.contextLength).toBe(200_000);
  });

  it('lets sluice.yaml override any entry, key by key', () => {
    const { config } = load(model('    provider: openai\n    upstream_model: gpt-4o\n    api_key_env: K\n    price: { output_per_million_usd: 9, cached_input_per_million_usd: 1 }\n'), { K: 'key-0123456789' });
    expect(config!.models.m!.price).toEqual({ inputPerMillionUsd: 2.5, outputPerMillionUsd: 9, cachedInputPerMillionUsd: 1 });
  });

  it('refuses at start-up a hosted model the catalog lacks and sluice.yaml does not price: never price 0', () => {
    const yaml = model('    provider: openai\n    upstream_model: gpt-imaginary-9\n    api_key_env: K\n');
    expect(load(yaml, { K: 'key-0123456789' }).problems).toEqual([
      'models.m.price: gpt-imaginary-9 on provider openai is not in the price catalog; set price.input_per_million_usd and price.output_per_million_usd (a hosted model never serves at price 0)',
    ]);
    expect(load(yaml.replace('    api_key_env', '    price: { input_per_million_usd: 1 }\n    api_key_env'), { K: 'key-0123456789' }).problems).toHaveLength(1);
    expect(load(yaml.replace('    api_key_env', '    price: { input_per_million_usd: 1, output_per_million_usd: 4 }\n    api_key_env'), { K: 'key-0123456789' }).problems).toEqual([]);
  });

  it('prices a bedrock model from the catalog (AWS), and refuses one it lacks', () => {
    const bedrock = (upstream: string) => model(`    upstream:\n      protocol: bedrock\n      deployments: [{ region: us-east-1, upstream_model: '${upstream}' }]\n`);
    expect(load(bedrock('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).config!.models.m!.price).toEqual({
      inputPerMillionUsd: 3.3,
      outputPerMillionUsd: 16.5,
      cachedInputPerMillionUsd: 0.33,
      cacheWritePerMillionUsd: 4.125,
    });
    expect(load(bedrock('anthropic.claude-imaginary-v9:0')).problems).toEqual([
      'models.m.price: anthropic.claude-imaginary-v9:0 on provider bedrock is not in the price catalog; set price.input_per_million_usd and price.output_per_million_usd (a hosted model never serves at price 0)',
    ]);
  });

  it('leaves a self-hosted engine free unless priced', () => {
    const { config } = load(model('    base_url: http://127.0.0.1:8000/v1\n'));
    expect(config!.models.m!.price).toEqual({ inputPerMillionUsd: 0, outputPerMillionUsd: 0 });
  });

  it('finds nothing for an unknown provider id or model', () => {
    expect(catalogPrice('anthropic', 'no-such-model')).toBeNull();
  });
});

/** The engine's usage as the chat call settles it (what billing prices). */
const settled = (usage: TokenUsage) => new ServedListener().settled(usage, 200);

describe('cache billing conventions', () => {
  const sonnet = { inputPerMillionUsd: 3, outputPerMillionUsd: 15, cachedInputPerMillionUsd: 0.3, cacheWritePerMillionUsd: 3.75 };

  it("Anthropic's input_tokens excludes the cache: the three are added, the cache's parts billed at their prices", () => {
    const usage = readAnthropicUsage({ input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 50 })!;
    expect(usage).toEqual({ inputTokens: 1300, outputTokens: 50, cachedTokens: 1000, cacheWriteTokens: 200 });
    expect(costMicros(sonnet, usage.inputTokens, usage.outputTokens, settled(usage))).toBe(100 * 3 + 1000 * 0.3 + 200 * 3.75 + 50 * 15);
  });

  it("OpenAI's prompt_tokens includes cached_tokens: they are not counted twice", () => {
    const usage = readOpenAIUsage({ prompt_tokens: 1100, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 1000 } })!;
    expect(usage).toEqual({ inputTokens: 1100, outputTokens: 50, cachedTokens: 1000 });
    const gpt4o = { inputPerMillionUsd: 2.5, outputPerMillionUsd: 10, cachedInputPerMillionUsd: 1.25 };
    expect(costMicros(gpt4o, usage.inputTokens, usage.outputTokens, settled(usage))).toBe(100 * 2.5 + 1000 * 1.25 + 50 * 10);
  });

  it('a model without cache prices bills cached tokens at the input price', () => {
    expect(costMicros({ inputPerMillionUsd: 2, outputPerMillionUsd: 4 }, 1000, 10, { cachedInputTokens: 900 })).toBe(1000 * 2 + 10 * 4);
  });
});

describe('redacting a key an engine echoes', () => {
  const key = 'sk-proj-abcdefghijklmnop0123456789WXYZ';
  it.each([
    [`Incorrect API key provided: ${key}.`, 'Incorrect API key provided: [redacted].'],
    ['Incorrect API key provided: sk-proj-********************WXYZ. You can find', 'Incorrect API key provided: [redacted]. You can find'],
    ['key sk-proj-abcdefghij… is revoked', 'key [redacted] is revoked'],
    ['nothing secret here', 'nothing secret here'],
  ])('%s', (text, expected) => {
    expect(redactSecret(text, key)).toBe(expected);
  });
});
