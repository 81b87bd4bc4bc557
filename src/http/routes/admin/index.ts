/**
 * The admin API (`/admin/v1`), enabled only when SLUICE_ADMIN_TOKEN is set and
 * authenticated by `Authorization: Bearer $SLUICE_ADMIN_TOKEN`.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Container } from '../../../container.js';
import { AppError, invalidRequest } from '../../../domain/shared/errors.js';
import { secretsEqual } from '../../../domain/auth/api-keys.js';
import { usdToMicros } from '../../../domain/shared/money.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import {
  ApiKeyList,
  ApiKeyObject,
  CreditsBody,
  IdParams,
  NameBody,
  NewApiKey,
  OptionalNameBody,
  ProjectList,
  ProjectObject,
  UsageList,
  UsageQuery,
} from '../../schemas/admin.js';
import { keyToWire, projectToWire, usageToWire } from './mappers.js';
import { registerOutboxAdmin } from './outbox.js';
import { declareSecurityScheme } from '../../openapi-security.js';

const ADMIN_SECURITY = { name: 'AdminToken', scheme: { type: 'http', scheme: 'bearer', description: 'The operator token, SLUICE_ADMIN_TOKEN' } };

/** The document says how admin routes authenticate: the admin token as a bearer token. */
function documentAdminSecurity(scope: FastifyInstance): void {
  declareSecurityScheme(scope, ADMIN_SECURITY);
  scope.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.hide) route.schema = { ...route.schema, security: [{ [ADMIN_SECURITY.name]: [] }] };
  });
}

function registerAdminAuth(scope: FastifyInstance, token: string): void {
  scope.addHook('onRequest', async (request) => {
    if (request.method === 'OPTIONS') return;
    const authorization = request.headers.authorization;
    const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!match) throw new AppError('authentication', 'Missing authentication headers', { code: 'missing_admin_token' });
    if (!secretsEqual(match[1]!, token)) throw new AppError('permission', 'Invalid credentials', { code: 'invalid_admin_token' });
  });
}

export const adminRoutes: FastifyPluginAsync<{ container: Container }> = async (plain, { container }) => {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const { projects } = container;
  registerAdminAuth(scope, container.config.adminToken!);
  documentAdminSecurity(scope);
  const tags = ['admin'];

  scope.post('/projects', { schema: { tags, body: NameBody, response: { 200: ProjectObject } }, ...serializeAsBefore }, async (request) =>
    projectToWire(await projects.createProject(request.body.name)),
  );

  scope.get('/projects', { schema: { tags, querystring: UsageQuery, response: { 200: ProjectList } }, ...serializeAsBefore }, async (request) =>
    toListPage(await projects.listProjects(readLimit(request.query.limit, 100, 20), request.query.after), projectToWire),
  );

  scope.get('/projects/:id', { schema: { tags, params: IdParams, response: { 200: ProjectObject } }, ...serializeAsBefore }, async (request) =>
    projectToWire(await projects.getProject(request.params.id)),
  );

  const keysRoute = {
    schema: { tags, params: IdParams, body: OptionalNameBody, response: { 200: NewApiKey } },
    ...serializeAsBefore,
    // No body at all is a key named "default", as in the CLI.
    preValidation: async (request: FastifyRequest) => {
      request.body ??= {};
    },
  };
  scope.post('/projects/:id/keys', keysRoute, async (request) => {
    const { record, key } = await projects.createKey(request.params.id, request.body.name);
    return { ...keyToWire(record), key };
  });

  scope.get('/projects/:id/keys', { schema: { tags, params: IdParams, response: { 200: ApiKeyList } }, ...serializeAsBefore }, async (request) => {
    const keys = await projects.listKeys(request.params.id);
    return { object: 'list' as const, data: keys.map(keyToWire) };
  });

  scope.post('/keys/:id/revoke', { schema: { tags, params: IdParams, response: { 200: ApiKeyObject } }, ...serializeAsBefore }, async (request) =>
    keyToWire(await projects.revokeKey(request.params.id)),
  );

  const creditsSchema = { tags, params: IdParams, body: CreditsBody, response: { 200: ProjectObject } };
  scope.post('/projects/:id/credits', { schema: creditsSchema, ...serializeAsBefore }, async (request) => {
    const micros = usdToMicros(request.body.amount_usd);
    if (!Number.isSafeInteger(micros)) throw invalidRequest('amount_usd is out of range', 'amount_usd');
    return projectToWire(await projects.grantCredits(request.params.id, micros));
  });

  const usageSchema = { tags, params: IdParams, querystring: UsageQuery, response: { 200: UsageList } };
  scope.get('/projects/:id/usage', { schema: usageSchema, ...serializeAsBefore }, async (request) => {
    const limit = readLimit(request.query.limit, 100, 20);
    const page = await projects.listUsage(request.params.id, limit, request.query.after);
    return toListPage(page, usageToWire);
  });

  registerOutboxAdmin(scope, container.outbox.service, tags);
};
