/**
 * Hosted providers as deployments: `provider: <name>` on a model or a deployment sets the
 * protocol, the base URL and how the key is sent; the operator gives only where the key
 * is (`api_key_env` or `api_key_file`). Base URLs from each provider's API reference:
 * OpenAI https://api.openai.com/v1, Groq https://api.groq.com/openai/v1, Together
 * https://api.together.xyz/v1, Fireworks https://api.fireworks.ai/inference/v1, DeepSeek
 * https://api.deepseek.com/v1, Mistral https://api.mistral.ai/v1, OpenRouter
 * https://openrouter.ai/api/v1, Gemini's OpenAI-compatible endpoint
 * https://generativelanguage.googleapis.com/v1beta/openai, Anthropic
 * https://api.anthropic.com/v1. Azure has no fixed host: its base URL is the resource's.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface ProviderPreset {
  name: string;
  /** The upstream protocol its API speaks. */
  protocol: string;
  /** null: the operator gives the base URL (an Azure resource). */
  baseUrl: string | null;
  /** The provider's id in the price catalog (price-catalog.ts). */
  priceProvider: string;
}

const preset = (name: string, protocol: string, baseUrl: string | null, priceProvider = name): ProviderPreset => ({ name, protocol, baseUrl, priceProvider });

export const PROVIDER_PRESETS: ReadonlyMap<string, ProviderPreset> = new Map(
  [
    preset('openai', 'openai', 'https://api.openai.com/v1'),
    preset('groq', 'openai', 'https://api.groq.com/openai/v1'),
    preset('together', 'openai', 'https://api.together.xyz/v1'),
    preset('fireworks', 'openai', 'https://api.fireworks.ai/inference/v1'),
    preset('deepseek', 'openai', 'https://api.deepseek.com/v1'),
    preset('mistral', 'openai', 'https://api.mistral.ai/v1'),
    preset('openrouter', 'openai', 'https://openrouter.ai/api/v1'),
    preset('gemini', 'openai', 'https://generativelanguage.googleapis.com/v1beta/openai', 'google'),
    preset('anthropic', 'anthropic', 'https://api.anthropic.com/v1'),
    preset('azure', 'azure', null),
  ].map((p) => [p.name, p]),
);

export const PROVIDER_NAMES = [...PROVIDER_PRESETS.keys()];

type Env = Readonly<Record<string, string | undefined>>;

export interface KeySource {
  api_key_env?: string;
  api_key_file?: string;
}

/**
 * The key a deployment sends: from the environment variable or the file (its first line,
 * trimmed). `required`: a hosted provider, where a missing key is refused at start-up.
 * The problem names the variable or the file, never a value.
 */
export function resolveKey(where: string, source: KeySource, env: Env, cwd: string, required: boolean, problems: string[]): string | null {
  if (source.api_key_env && source.api_key_file) {
    problems.push(`${where}.api_key_file: give the key once, in api_key_env or api_key_file`);
    return null;
  }
  if (source.api_key_file) {
    const file = path.resolve(cwd, source.api_key_file);
    try {
      const key = readFileSync(file, 'utf8').split(/\r?\n/, 1)[0]!.trim();
      if (key) return key;
      problems.push(`${where}.api_key_file: ${file} is empty`);
    } catch (err) {
      problems.push(`${where}.api_key_file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return null;
  }
  if (source.api_key_env) {
    const key = env[source.api_key_env];
    if (key) return key;
    if (required) problems.push(`${where}.api_key_env: environment variable ${source.api_key_env} is not set`);
    return null;
  }
  if (required) problems.push(`${where}: a hosted provider needs its key: set api_key_env or api_key_file`);
  return null;
}
