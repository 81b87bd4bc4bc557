/**
 * The Responses API's configuration section, `responses:`: how long stored responses are
 * kept (RESPONSES_RETENTION_DAYS as a twin), how often a background response that keeps
 * losing its worker is run before it is failed, what becomes of hosted tools (web_search,
 * file_search, …: dropped by default, or refused), and the keys reasoning is sealed with
 * when a client carries it without storage (`include: ["reasoning.encrypted_content"]`),
 * and the limits of its WebSocket mode (`responses.websocket`, docs/responses.md "WebSocket mode").
 */
import { Type } from '@sinclair/typebox';
import { envInteger, envSecret } from './env.js';
import { PositiveInt } from './schema-kit.js';
import { configSection, type Env } from './section.js';

export type HostedToolsPolicy = 'drop' | 'refuse';

/** The limits of one WebSocket on `/v1/responses`, each ending it with its own close code. */
export interface ResponsesSocketConfig {
  /** A client message larger than this closes the socket (1009) before it is read whole. */
  maxMessageBytes: number;
  /** A socket with no response running and no message for this long is closed (1000, `idle_timeout`). */
  idleTimeoutMs: number;
  /** A socket is closed this long after it opened (1000, `websocket_connection_limit_reached`), after its running response. */
  maxAgeMs: number;
  /** Sockets open at once per API key on this replica; one more is closed at once (1008). */
  maxPerKey: number;
}

export interface ResponsesConfig {
  /** Stored responses, and background responses' events, are deleted this long after creation. */
  retentionDays: number;
  /** Runs of a background response that lost its worker before it began to answer, before it is failed. */
  maxAttempts: number;
  /** Hosted tools a request names: left out (named in `x-sluice-dropped-tools`), or refused with a 400. */
  hostedTools: HostedToolsPolicy;
  /** Secrets reasoning is sealed with: the first seals, all open. Empty: one generated and kept in the data directory. Never logged. */
  reasoningKeys: string[];
  websocket: ResponsesSocketConfig;
}

const SocketSchema = Type.Object(
  {
    max_message_bytes: Type.Optional(PositiveInt('largest client message on a Responses WebSocket, in bytes (default: the server body limit, server.body_limit_mb)')),
    idle_timeout_seconds: Type.Optional(PositiveInt('a Responses WebSocket with nothing running and no message this long is closed (default 600)')),
    max_age_seconds: Type.Optional(PositiveInt('a Responses WebSocket is closed this long after it opened (default 3600, as OpenAI)')),
    max_per_key: Type.Optional(PositiveInt('Responses WebSockets open at once per API key on one replica (default 16)')),
  },
  { additionalProperties: false },
);

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
      websocket: Type.Optional(SocketSchema),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file, env, cwd, core, problems }): ResponsesConfig => ({
    retentionDays: envInteger(env, 'RESPONSES_RETENTION_DAYS', problems, 1) ?? file?.retention_days ?? 30,
    maxAttempts: file?.max_attempts ?? 3,
    hostedTools: hostedToolsOf(env.RESPONSES_HOSTED_TOOLS, problems) ?? file?.hosted_tools ?? 'drop',
    reasoningKeys: reasoningKeys(file?.reasoning_keys, env, cwd, problems),
    websocket: {
      maxMessageBytes: file?.websocket?.max_message_bytes ?? core.server.bodyLimitBytes,
      idleTimeoutMs: (file?.websocket?.idle_timeout_seconds ?? 600) * 1000,
      maxAgeMs: (file?.websocket?.max_age_seconds ?? 3600) * 1000,
      maxPerKey: file?.websocket?.max_per_key ?? 16,
    },
  }),
});

function hostedToolsOf(raw: string | undefined, problems: string[]): HostedToolsPolicy | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'drop' || raw === 'refuse') return raw;
  problems.push(`RESPONSES_HOSTED_TOOLS: must be drop or refuse, got "${raw}"`);
  return undefined;
}
