/**
 * The request log's configuration section, `request_log:`: whether calls are logged at
 * all (`enabled`, default true), what a project keeps of its
 * calls' bodies and for how long unless it says otherwise (each project may set its own
 * through the admin API), and how the background writer batches (its queue is bounded:
 * past `max_queue` waiting entries, new ones are dropped and counted).
 */
import { Type } from '@sinclair/typebox';
import { BODY_MODES, type LoggingSettings } from '../domain/request-log/request-log.types.js';
import { configSection } from './section.js';

export interface RequestLogConfig {
  /** false: no call is logged (nothing queued or written; the routes read an empty log). */
  enabled: boolean;
  defaults: LoggingSettings;
  batchSize: number;
  flushIntervalMs: number;
  maxQueue: number;
  inlineBodyBytes: number;
  maxBodyBytes: number;
}

const RequestLogFileSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'false: no call is logged at all, whatever the projects say (default true)' })),
    bodies: Type.Optional(Type.Union(BODY_MODES.map((m) => Type.Literal(m)), { description: 'what a project keeps of request and answer bodies unless it sets its own: off, redacted or full (default off)' })),
    retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'days a call stays in the log unless its project sets its own (default 30)' })),
    batch_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, description: 'entries written per insert (default 200)' })),
    flush_interval_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000, description: 'how often the queue is written (default 500)' })),
    max_queue: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'entries waiting at most; beyond, new ones are dropped and counted (default 20000)' })),
    inline_body_bytes: Type.Optional(Type.Integer({ minimum: 256, maximum: 1_048_576, description: 'bodies larger than this go to the blob store, a preview stays in the database (default 16384)' })),
    max_body_bytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 67_108_864, description: 'a request or answer body longer than this is cut (default 1048576)' })),
  },
  { additionalProperties: false },
);

export const requestLogSection = configSection({
  key: 'request_log',
  schema: RequestLogFileSchema,
  resolve: ({ file }): RequestLogConfig => ({
    enabled: file?.enabled ?? true,
    defaults: { bodies: file?.bodies ?? 'off', retentionDays: file?.retention_days ?? 30 },
    batchSize: file?.batch_size ?? 200,
    flushIntervalMs: file?.flush_interval_ms ?? 500,
    maxQueue: file?.max_queue ?? 20_000,
    inlineBodyBytes: file?.inline_body_bytes ?? 16_384,
    maxBodyBytes: file?.max_body_bytes ?? 1_048_576,
  }),
});
