/**
 * Test-only routes under /v1/_probe, behind the production API-key plugin, for the
 * foundation suites: they exercise auth, rate limits, quota and the 500 path without
 * depending on the inference, file or batch routes. Pass `registerProbeRoutes` as the
 * harness's `extendApp`.
 */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../src/container.js';
import { registerApiKeyAuth, principalOf } from '../../src/http/plugins/api-key-auth.js';
import { AppError } from '../../src/domain/shared/errors.js';

export const PROBE = '/v1/_probe';
export const PROBE_MODEL = 'probe-model';

export interface SpendBody {
  cost_micros?: number;
  delay_ms?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function registerProbeRoutes(app: FastifyInstance, container: Container): void {
  app.register(
    async (scope) => {
      registerApiKeyAuth(scope, {
        authenticator: container.authenticator,
        rateLimiter: container.rateLimiter,
        requestsPerMinute: container.config.rateLimit.requestsPerMinute,
      });

      scope.get('/whoami', async (request) => ({ object: 'principal', ...principalOf(request) }));

      // A billable call: quota check before any work, then one usage record and debit.
      scope.post<{ Body: SpendBody }>('/spend', async (request) => {
        const principal = principalOf(request);
        await container.billing.assertCanSpend(principal.projectId);
        if (request.body?.delay_ms) await sleep(request.body.delay_ms);
        const record = await container.billing.record({
          principal,
          model: PROBE_MODEL,
          route: 'probe',
          inputTokens: 1,
          outputTokens: 0,
          requestId: request.id,
          status: 200,
          costMicros: request.body?.cost_micros ?? 1,
        });
        return { object: 'usage_record', id: record.id, cost_micros: record.costMicros };
      });

      scope.get('/boom', async () => {
        throw new Error('secret internal detail');
      });

      // An internal AppError keeps its code but not its message, unless marked `expose`.
      scope.get('/boom-app', async () => {
        throw new AppError('internal', 'db at 10.0.0.5 said: password expired', { code: 'inference_error' });
      });

      scope.get<{ Querystring: { ms?: string } }>('/slow', async (request) => {
        await sleep(Number(request.query.ms ?? 1000));
        return { object: 'slow', done: true };
      });
    },
    { prefix: PROBE },
  );
}
