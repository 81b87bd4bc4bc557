/** The web console's configuration section, `console:`: how long a sign-in lasts, and sign-in attempts per client address. */
import { Type } from '@sinclair/typebox';
import { PositiveInt } from './schema-kit.js';
import { configSection } from './section.js';

export interface ConsoleConfig {
  sessionTtlMs: number;
  signInAttemptsPerMinute: number;
}

export const consoleSection = configSection({
  key: 'console',
  schema: Type.Object(
    {
      session_ttl_minutes: Type.Optional(PositiveInt('how long a console sign-in lasts (default 720)')),
      sign_in_attempts_per_minute: Type.Optional(PositiveInt('console sign-in attempts per client address per minute (default 10)')),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file }): ConsoleConfig => ({
    sessionTtlMs: (file?.session_ttl_minutes ?? 720) * 60_000,
    signInAttemptsPerMinute: file?.sign_in_attempts_per_minute ?? 10,
  }),
});
