/**
 * The admin API's key routes: create a project's key (with its policy), list a project's
 * keys, change a key's name and policy, rotate its secret, and revoke it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ApiKeyList, ApiKeyObject, IdParams, KeyPatchBody, NewApiKey, NewKeyBody } from '../../schemas/admin.js';
import { RotateBody } from '../../schemas/key-policy.js';
import { keyToWire } from './mappers.js';

const tags = ['admin'];

export function registerKeyAdmin(plain: FastifyInstance, { projects }: { projects: ProjectsService }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

  const createRoute = {
    schema: { tags, params: IdParams, body: NewKeyBody, response: { 200: NewApiKey } },
    ...serializeAsBefore,
    // No body at all is a key named "default", as in the CLI.
    preValidation: async (request: FastifyRequest) => {
      request.body ??= {};
    },
  };
  scope.post('/projects/:id/keys', createRoute, async (request) => {
    const { name, ...policy } = request.body;
    const { record, key } = await projects.createKey(request.params.id, name, policy);
    return { ...keyToWire(record), key };
  });

  scope.get('/projects/:id/keys', { schema: { tags, params: IdParams, response: { 200: ApiKeyList } }, ...serializeAsBefore }, async (request) => {
    const keys = await projects.listKeysWithLastUse(request.params.id);
    return { object: 'list' as const, data: keys.map(({ record, lastUsedAtMs }) => ({ ...keyToWire(record), last_used_at: lastUsedAtMs === null ? null : toUnixSeconds(lastUsedAtMs) })) };
  });

  scope.patch('/keys/:id', { schema: { tags, params: IdParams, body: KeyPatchBody, response: { 200: ApiKeyObject } }, ...serializeAsBefore }, async (request) =>
    keyToWire(await projects.updateKey(request.params.id, request.body)),
  );

  scope.post('/keys/:id/rotate', { schema: { tags, params: IdParams, body: RotateBody, response: { 200: NewApiKey } }, ...serializeAsBefore }, async (request) => {
    const { record, key } = await projects.rotateKey(request.params.id, request.body.grace_seconds);
    return { ...keyToWire(record), key };
  });

  scope.post('/keys/:id/revoke', { schema: { tags, params: IdParams, response: { 200: ApiKeyObject } }, ...serializeAsBefore }, async (request) =>
    keyToWire(await projects.revokeKey(request.params.id)),
  );
}
