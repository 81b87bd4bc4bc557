/**
 * The `agents:` section: what Sluice does for coding agents' requests on every wire.
 *
 *   agents:
 *     strip_billing_header: true   # Claude Code's per-request x-anthropic-billing-header line
 *
 * `strip_billing_header` (default true; `AGENTS_STRIP_BILLING_HEADER`) removes the line
 * Claude Code puts at the head of its system prompt before the prompt reaches an engine
 * that does not speak Anthropic's API, so the engine's prefix cache holds across turns.
 */
import { Type } from '@sinclair/typebox';
import { configSection } from './section.js';
import { envBoolean } from './env.js';

export interface AgentsConfig {
  stripBillingHeader: boolean;
}

export const agentsSection = configSection({
  key: 'agents',
  schema: Type.Object(
    {
      strip_billing_header: Type.Optional(
        Type.Boolean({ description: "remove Claude Code's x-anthropic-billing-header line (its random cch value defeats prefix caches) before a prompt reaches a non-Anthropic engine (default true)" }),
      ),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file, env, problems }): AgentsConfig => ({
    stripBillingHeader: envBoolean(env, 'AGENTS_STRIP_BILLING_HEADER', problems) ?? file?.strip_billing_header ?? true,
  }),
});
