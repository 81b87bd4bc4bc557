/**
 * Test-only routes under /v1/_probe, behind the production API-key plugin, for the
 * foundation suites: they exercise auth, rate limits, quota and the 500 path without
 * depending on the inference, file or batch routes. Pass `registerProbeRoutes` as the
 * harness's `extendApp`.
 */
import type { FastifyInstance } from 'fastify';
import type { Assembly } from '../../src/composition/features.js';
import { callerOf, registerCallerAuth } from '../../src/http/auth/caller-auth.js';
import { ApiKeyStrategy } from '../../src/http/auth/api-key-strategy.js';
import { AppError } from '../../src/domain/shared/errors.js';

export const PROBE = '/v1/_probe';
export const PROBE_MODEL = 'probe-model';

export interface SpendBody {
  cost_micros?: number;
  delay_ms?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function registerProbeRoutes(app: FastifyInstance, { core }: Assembly): void {
  app.register(
    async (scope) => {
      registerCallerAuth(scope, {
        strategy: new ApiKeyStrategy(core.authenticator, core.creditMeter),
        rateLimit: core.apiKeyRateLimit,
      });

      scope.get('/whoami', async (request) => {
        const { projectId, keyId } = callerOf(request).principal;
        return { object: 'principal', projectId, keyId };
      });

      // A billable call of a known cost: admitted through the caller's meter before any work, then settled.
      scope.post<{ Body: SpendBody }>('/spend', async (request) => {
        const { principal, meter } = callerOf(request);
        const cost = request.body?.cost_micros ?? 1;
        const call = { model: PROBE_MODEL, route: 'probe', requestId: request.id, inputTokens: 1, maxOutputTokens: 0, estimateMicros: cost };
        const admission = await meter.admit(principal, call);
        if (request.body?.delay_ms) await sleep(request.body.delay_ms);
        const { record } = await admission.settle({ inputTokens: 1, outputTokens: 0, status: 200, costMicros: cost });
        return { object: 'usage_record', id: record?.id, cost_micros: cost };
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
