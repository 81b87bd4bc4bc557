/**
 * The Responses API's configuration section, `responses:`: how long stored responses are
 * kept (RESPONSES_RETENTION_DAYS as a twin), and how often a background response that
 * keeps losing its worker is run before it is failed.
 */
import { Type } from '@sinclair/typebox';
import { envInteger } from './env.js';
import { PositiveInt } from './schema-kit.js';
import { configSection } from './section.js';

export interface ResponsesConfig {
  /** Stored responses, and background responses' events, are deleted this long after creation. */
  retentionDays: number;
  /** Runs of a background response that lost its worker before it began to answer, before it is failed. */
  maxAttempts: number;
}

export const responsesSection = configSection({
  key: 'responses',
  schema: Type.Object(
    {
      retention_days: Type.Optional(PositiveInt('how long stored responses (and background responses\' events) are kept (default 30)')),
      max_attempts: Type.Optional(PositiveInt('runs of a background response before one that keeps losing its worker is failed (default 3)')),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file, env, problems }): ResponsesConfig => ({
    retentionDays: envInteger(env, 'RESPONSES_RETENTION_DAYS', problems, 1) ?? file?.retention_days ?? 30,
    maxAttempts: file?.max_attempts ?? 3,
  }),
});
