/** buildApp(container): the Fastify instance with every plugin and route; never listens. */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Container } from '../container.js';
import { newRequestId } from '../domain/shared/ids.js';
import { handleFrameworkError, registerErrorHandling } from './plugins/error-handler.js';
import { registerCors } from './plugins/cors.js';
import { registerJsonBody } from './plugins/json-body.js';
import { handleClientError, registerClientErrors } from './plugins/client-errors.js';
import { registerSlowClientGuards } from './plugins/slow-clients.js';
import { registerRequestContext } from './plugins/request-context.js';
import { registerTracing } from './plugins/tracing.js';
import { lazyChildLogger } from './request-logger.js';
import { registerOpsRoutes } from './routes/ops.js';
import { registerAdminRoutes } from './routes/admin/index.js';
import { apiScope } from './routes/api-scope.js';
import { AdminTokenStrategy } from './auth/admin-token-strategy.js';
import { consoleRoutes, registerRootRedirect } from './console/index.js';
import { v1Routes } from './routes/v1/index.js';
import { gatewayRoutes } from './routes/gateway/index.js';
import { storefrontRoutes } from './routes/storefront/index.js';
import { mcpScope } from './scopes/mcp.js';
import { WORDING_KEYWORD } from './schemas/wording.js';
import { openApiTransforms } from './openapi-document.js';
import { registerSecuritySchemes } from './openapi-security.js';
import { OUTPUT_CAP_HEADER } from '../domain/billing/credit-meter.js';

/**
 * verbose: a refused value and its schema node ride on the error, for the domain's wording
 * (schemas/wording.ts); `x-error` is that wording, an annotation Ajv must know in strict
 * mode. allowUnionTypes: OpenAI's string-or-array fields are `type: ['string', 'array']`,
 * so a fault is reported at the field, not as a failed branch of an anyOf.
 */
export const AJV_OPTIONS = {
  coerceTypes: false,
  removeAdditional: false,
  allErrors: false,
  verbose: true,
  allowUnionTypes: true,
  keywords: [WORDING_KEYWORD],
};

/** The admin API: the admin token as a bearer token, rate-limited like a key. */
const ADMIN_POLICY = {
  security: [{ name: 'AdminToken', scheme: { type: 'http', scheme: 'bearer', description: 'The operator token, SLUICE_ADMIN_TOKEN' } }],
  rateLimit: { exceededMessage: 'Rate limit exceeded: too many requests per minute for the admin token' },
};

export async function buildApp(container: Container): Promise<FastifyInstance> {
  const { config } = container;
  const { timeouts } = config.server;
  const app = Fastify({
    loggerInstance: container.logger as FastifyBaseLogger,
    genReqId: () => newRequestId(),
    // Fastify's own request logging (two lines per request) is off; request-context.ts logs one.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustProxy,
    return503OnClosing: true,
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    // Slow clients must not hold sockets forever: headers and the whole request are timed
    // by Node, a stalled body by slow-clients.ts. Answers are not timed here (connection
    // timeout off): long inference and streams are bounded per backend.
    requestTimeout: timeouts.requestMs,
    connectionTimeout: 0,
    http: {
      headersTimeout: timeouts.headersMs,
      // Node checks both timeouts on this period (30 s by default, too coarse for short ones).
      connectionsCheckingInterval: Math.max(50, Math.min(5_000, Math.floor(timeouts.headersMs / 4))),
      // client-errors.ts answers a missing Host in the envelope instead.
      requireHostHeader: false,
    },
    keepAliveTimeout: 72_000,
    ajv: { customOptions: AJV_OPTIONS },
  });

  registerRequestContext(app, container.metrics);
  if (config.tracing.enabled) registerTracing(app);
  registerErrorHandling(app);
  registerJsonBody(app);
  registerClientErrors(app);
  registerSlowClientGuards(app, timeouts.bodyIdleMs);

  // Each scope declares its own security schemes (api-scope.ts); its routes name them.
  const securitySchemes = registerSecuritySchemes(app);
  registerCors(app, {
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'x-api-key', 'x-project-id', 'openai-organization', 'openai-project'],
    exposedHeaders: ['x-request-id', 'x-typesafe-request-id', 'retry-after', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', OUTPUT_CAP_HEADER],
    maxAgeSeconds: 600,
  });
  await app.register(swagger, {
    openapi: {
      // 3.1: schemas are JSON Schema, so `type: ['string', 'null']` is valid as written.
      openapi: '3.1.0',
      info: { title: 'Sluice API', version: '1.0.0', description: 'OpenAI-compatible inference, classification, batch and decision API' },
      servers: [{ url: '/' }],
      components: { securitySchemes: securitySchemes as Record<string, never> },
    },
    // Error responses, streams and named components (openapi-document.ts); documentation only.
    ...openApiTransforms,
  });

  registerOpsRoutes(app, container);
  if (config.adminToken) {
    const strategy = new AdminTokenStrategy(config.adminToken, container.creditMeter);
    await app.register(apiScope, { prefix: '/admin/v1', container, strategy, routes: [registerAdminRoutes], policy: ADMIN_POLICY });
  }
  await app.register(v1Routes, { prefix: '/v1', container });
  await app.register(gatewayRoutes, { prefix: '/gateway/v1', container });
  await app.register(apiScope, { prefix: mcpScope.prefix(container), container, strategy: mcpScope.strategy(container), routes: mcpScope.routes, policy: mcpScope.policy });
  mcpScope.registerPublic(app, container);
  const { storefront } = container;
  if (storefront) await app.register(storefrontRoutes, { prefix: storefront.config.prefix, container, storefront });
  await app.register(consoleRoutes, { container });
  registerRootRedirect(app);
  return app;
}
