/**
 * The OpenAPI security schemes the mounted scopes declare (api-scope.ts), collected on the
 * root instance in the object the document's `components.securitySchemes` is built from
 * (@fastify/swagger keeps a reference to it and reads it whenever the document is built).
 */
import type { FastifyInstance } from 'fastify';
import type { ScopeSecurity } from './scope-policy.js';

type Schemes = Record<string, Readonly<Record<string, unknown>>>;

declare module 'fastify' {
  interface FastifyInstance {
    securitySchemes: Schemes;
  }
}

/** Decorates `app` with the (empty) scheme table and returns it, for swagger's `components`. */
export function registerSecuritySchemes(app: FastifyInstance): Schemes {
  const schemes: Schemes = Object.create(null) as Schemes;
  app.decorate('securitySchemes', { getter: () => schemes });
  return schemes;
}

export function declareSecurityScheme(scope: FastifyInstance, security: ScopeSecurity): void {
  const known = Object.hasOwn(scope.securitySchemes, security.name) ? scope.securitySchemes[security.name] : undefined;
  if (known && JSON.stringify(known) !== JSON.stringify(security.scheme)) {
    throw new Error(`security scheme ${security.name} is declared twice, differently`);
  }
  scope.securitySchemes[security.name] = security.scheme;
}
