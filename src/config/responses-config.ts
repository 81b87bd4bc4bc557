/**
 * The Responses API's configuration section, `responses:`: how long stored responses are
 * kept (RESPONSES_RETENTION_DAYS as a twin), how often a background response that keeps
 * losing its worker is run before it is failed, and the limits of its WebSocket mode
 * (`responses.websocket`, docs/responses.md "WebSocket mode").
 */
import { Type } from '@sinclair/typebox';
import { envInteger } from './env.js';
import { PositiveInt } from './schema-kit.js';
import { configSection } from './section.js';

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

export const responsesSection = configSection({
  key: 'responses',
  schema: Type.Object(
    {
      retention_days: Type.Optional(PositiveInt('how long stored responses (and background responses\' events) are kept (default 30)')),
      max_attempts: Type.Optional(PositiveInt('runs of a background response before one that keeps losing its worker is failed (default 3)')),
      websocket: Type.Optional(SocketSchema),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file, env, core, problems }): ResponsesConfig => ({
    retentionDays: envInteger(env, 'RESPONSES_RETENTION_DAYS', problems, 1) ?? file?.retention_days ?? 30,
    maxAttempts: file?.max_attempts ?? 3,
    websocket: {
      maxMessageBytes: file?.websocket?.max_message_bytes ?? core.server.bodyLimitBytes,
      idleTimeoutMs: (file?.websocket?.idle_timeout_seconds ?? 600) * 1000,
      maxAgeMs: (file?.websocket?.max_age_seconds ?? 3600) * 1000,
      maxPerKey: file?.websocket?.max_per_key ?? 16,
    },
  }),
});
