/**
 * The Responses API's configuration section, `responses:`: how long stored responses are
 * kept (RESPONSES_RETENTION_DAYS as a twin), how often a background response that keeps
 * losing its worker is run before it is failed, what becomes of hosted tools (web_search,
 * file_search, …: dropped by default, or refused), and the keys reasoning is sealed with
 * when a client carries it without storage (`include: ["reasoning.encrypted_content"]`).
 */
import { Type } from '@sinclair/typebox';
import { envInteger, envSecret } from './env.js';
import { PositiveInt } from './schema-kit.js';
import { configSection, type Env } from './section.js';

export type HostedToolsPolicy = 'drop' | 'refuse';

export interface ResponsesConfig {
  /** Stored responses, and background responses' events, are deleted this long after creation. */
  retentionDays: number;
  /** Runs of a background response that lost its worker before it began to answer, before it is failed. */
  maxAttempts: number;
  /** Hosted tools a request names: left out (named in `x-sluice-dropped-tools`), or refused with a 400. */
  hostedTools: HostedToolsPolicy;
  /** Secrets reasoning is sealed with: the first seals, all open. Empty: one generated and kept in the data directory. Never logged. */
  reasoningKeys: string[];
}

const MIN_KEY_LENGTH = 16;

function reasoningKeys(file: string[] | undefined, env: Env, cwd: string, problems: string[]): string[] {
  const fromEnv = envSecret(env, 'RESPONSES_REASONING_KEYS', cwd, problems);
  const keys = fromEnv !== null ? fromEnv.split(',').map((key) => key.trim()).filter((key) => key !== '') : (file ?? []);
  if (keys.some((key) => key.length < MIN_KEY_LENGTH)) problems.push(`responses.reasoning_keys: each key must be at least ${MIN_KEY_LENGTH} characters`);
  return keys;
}

export const responsesSection = configSection({
  key: 'responses',
  schema: Type.Object(
    {
      retention_days: Type.Optional(PositiveInt('how long stored responses (and background responses\' events) are kept (default 30)')),
      max_attempts: Type.Optional(PositiveInt('runs of a background response before one that keeps losing its worker is failed (default 3)')),
      hosted_tools: Type.Optional(
        Type.Union([Type.Literal('drop'), Type.Literal('refuse')], {
          description: 'hosted tools (web_search, file_search, code_interpreter, image_generation, computer_use_preview, mcp): drop (default; named in x-sluice-dropped-tools) or refuse (400)',
        }),
      ),
      reasoning_keys: Type.Optional(
        Type.Array(Type.String({ minLength: 1 }), {
          description: 'secrets that seal reasoning for store: false clients, current first, previous after (RESPONSES_REASONING_KEYS, comma-separated, or RESPONSES_REASONING_KEYS_FILE); unset: one generated in the data directory',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file, env, cwd, problems }): ResponsesConfig => ({
    retentionDays: envInteger(env, 'RESPONSES_RETENTION_DAYS', problems, 1) ?? file?.retention_days ?? 30,
    maxAttempts: file?.max_attempts ?? 3,
    hostedTools: hostedToolsOf(env.RESPONSES_HOSTED_TOOLS, problems) ?? file?.hosted_tools ?? 'drop',
    reasoningKeys: reasoningKeys(file?.reasoning_keys, env, cwd, problems),
  }),
});

function hostedToolsOf(raw: string | undefined, problems: string[]): HostedToolsPolicy | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'drop' || raw === 'refuse') return raw;
  problems.push(`RESPONSES_HOSTED_TOOLS: must be drop or refuse, got "${raw}"`);
  return undefined;
}
