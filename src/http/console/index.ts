/**
 * The web console: its static files at /console, sign-in, and the same route modules as
 * /v1 and /admin/v1 mounted under /console/api with the session strategy, so a browser
 * sees exactly what its credential would see through the API.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import cookie from '@fastify/cookie';
import type { Container } from '../../container.js';
import { SessionStrategy } from '../auth/session-strategy.js';
import { apiScope } from '../routes/api-scope.js';
import { V1_ROUTE_MODULES } from '../routes/v1/index.js';
import { registerAdminRoutes } from '../routes/admin/index.js';
import { registerSessionRoutes } from './session-routes.js';
import { consoleBuildDir, registerConsoleAssets } from './static-assets.js';

export const consoleRoutes: FastifyPluginAsync<{ container: Container; buildDir?: string }> = async (scope, { container, buildDir }) => {
  // The same routes are documented once, under /v1 and /admin/v1.
  scope.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await scope.register(cookie);
  await registerConsoleAssets(scope, buildDir ?? consoleBuildDir());
  registerSessionRoutes(scope, container);
  const strategy = (kind: 'project' | 'operator') =>
    new SessionStrategy({ sessions: container.console.sessions, projects: container.projects, meter: container.creditMeter, scope: kind });
  // A developer's session counts against its key's limit; an operator's against the operator's.
  // The session's own refusals (CSRF, operator only) are 403 on every route mounted here,
  // the decision route included (its wire answers a bad API key 401).
  const policy = {
    rateLimit: { exceededMessage: 'Rate limit exceeded: too many requests per minute for this console session' },
    statusOverrides: { permission: 403 },
  };
  await scope.register(apiScope, { prefix: '/console/api/v1', container, strategy: strategy('project'), routes: V1_ROUTE_MODULES, policy });
  if (container.config.adminToken) {
    await scope.register(apiScope, { prefix: '/console/api/admin', container, strategy: strategy('operator'), routes: [registerAdminRoutes], policy });
  }
};

/** `GET /` from a browser goes to the console; API clients get the usual 404. */
export function registerRootRedirect(app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (accept.includes('text/html')) return reply.redirect('/console/', 302);
    return reply.callNotFound();
  });
}
