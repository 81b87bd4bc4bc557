/** buildApp(parts): the Fastify instance with every plugin and the scopes it is given; never listens. */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { newRequestId } from '../domain/shared/ids.js';
import { handleFrameworkError, registerErrorHandling } from './plugins/error-handler.js';
import { registerCors } from './plugins/cors.js';
import { registerJsonBody } from './plugins/json-body.js';
import { handleClientError, registerClientErrors } from './plugins/client-errors.js';
import { registerSlowClientGuards } from './plugins/slow-clients.js';
import { registerRequestContext } from './plugins/request-context.js';
import { registerTracing } from './plugins/tracing.js';
import { lazyChildLogger } from './request-logger.js';
import { registerOpsRoutes, type Readiness } from './routes/ops.js';
import { mountScopes, type ScopeDeclaration } from './scopes/api-scope.js';
import { AJV_OPTIONS } from '../wire/validate.js';
import { openApiTransforms } from './openapi-document.js';
import { registerSecuritySchemes } from './openapi-security.js';
import { OUTPUT_CAP_HEADER } from '../domain/billing/credit-meter.js';
import { BUDGET_RESET_HEADER } from '../domain/billing/key-budgets.js';
import { SERVED_MODEL_HEADER } from '../domain/completions/served-call.js';
import { registerWebSockets } from './plugins/websocket.js';
import { SocketRegistry } from './socket/socket-registry.js';

/** What the app serves: the scopes the features declare, and the process's own ops routes. */
export interface AppParts {
  config: Readonly<Config>;
  logger: Logger;
  metrics: Metrics;
  readiness(): Promise<Readiness>;
  /** Mounted in order. */
  scopes: readonly ScopeDeclaration[];
  /** The WebSockets the scopes' socket routes open (each told when the app closes); absent, a registry of its own. */
  sockets?: SocketRegistry;
}

export async function buildApp(parts: AppParts): Promise<FastifyInstance> {
  const { config } = parts;
  const { timeouts } = config.server;
  const app = Fastify({
    loggerInstance: parts.logger as FastifyBaseLogger,
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
    // The same options as the request bodies' own validators (wire/validate.ts), for the other schemas.
    ajv: { customOptions: AJV_OPTIONS },
  });

  registerRequestContext(app, parts.metrics);
  if (config.tracing.enabled) registerTracing(app);
  registerErrorHandling(app);
  registerJsonBody(app);
  registerClientErrors(app);
  registerSlowClientGuards(app, timeouts.bodyIdleMs);

  // Each scope declares its own security schemes (api-scope.ts); its routes name them.
  const securitySchemes = registerSecuritySchemes(app);
  registerCors(app, {
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: [
      'authorization', 'content-type', 'x-api-key', 'x-project-id', 'openai-organization', 'openai-project',
      // Anthropic's SDKs, from a browser.
      'anthropic-version', 'anthropic-beta', 'anthropic-dangerous-direct-browser-access',
    ],
    exposedHeaders: [
      'x-request-id', 'x-typesafe-request-id', 'retry-after', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', OUTPUT_CAP_HEADER, BUDGET_RESET_HEADER, SERVED_MODEL_HEADER,
      // Anthropic's Messages wire: its names for the request id and the rate limit, and what it did with a request.
      'request-id', 'anthropic-ratelimit-requests-limit', 'anthropic-ratelimit-requests-remaining', 'x-sluice-dropped-tools', 'x-sluice-token-count-method',
    ],
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

  registerOpsRoutes(app, parts);
  // Before the scopes: a socket route's upgrade goes through its scope's hooks.
  await registerWebSockets(app, { maxMessageBytes: config.responses.websocket.maxMessageBytes, registry: parts.sockets ?? new SocketRegistry() });
  await mountScopes(app, parts.scopes);
  return app;
}
