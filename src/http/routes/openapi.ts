/** GET {scope}/openapi.json: the OpenAPI document of every documented route (public: the scope lists it in `publicPaths`). */
import type { FastifyInstance } from 'fastify';
import { serializeAsBefore } from '../schemas/document-only.js';
import { OpenApiDocument } from '../schemas/ops.js';

export const OPENAPI_PATH = '/openapi.json';

export function registerOpenApiRoute(scope: FastifyInstance): void {
  scope.get(OPENAPI_PATH, { schema: { hide: true, response: { 200: OpenApiDocument } }, ...serializeAsBefore }, async () => scope.swagger());
}
