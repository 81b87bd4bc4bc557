/**
 * Key budgets' configuration section, `budgets:`: where replicas share budget holds in
 * Redis (when REDIS_URL is set), and how long a hold outlives a replica that stopped
 * refreshing it (it died with its calls).
 */
import { Type } from '@sinclair/typebox';
import { configSection } from './section.js';

export interface BudgetsConfig {
  /** Key prefix of the shared budget state in Redis. */
  redisPrefix: string;
  /** A shared hold expires this long after its replica last refreshed it. */
  holdTtlMs: number;
}

export const budgetsSection = configSection({
  key: 'budgets',
  schema: Type.Object(
    {
      redis_prefix: Type.Optional(Type.String({ minLength: 1, description: 'key prefix of the shared budget state in Redis (default sluice:budget)' })),
      hold_ttl_seconds: Type.Optional(
        Type.Integer({ minimum: 5, maximum: 3600, description: 'a shared budget hold expires this long after its replica last refreshed it (default 60)' }),
      ),
    },
    { additionalProperties: false },
  ),
  resolve: ({ file }): BudgetsConfig => ({ redisPrefix: file?.redis_prefix ?? 'sluice:budget', holdTtlMs: (file?.hold_ttl_seconds ?? 60) * 1000 }),
});
