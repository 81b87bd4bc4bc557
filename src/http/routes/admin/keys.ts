/**
 * The admin API's key routes: create a project's key (with its policy), list a project's
 * keys, change a key's name and policy, rotate its secret, and revoke it. Each change is
 * written to the audit log. A project's members may make and list its keys; changing,
 * rotating and revoking one needs the project's `manage` permission (roles.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ApiKeyList, ApiKeyObject, IdParams, KeyPatchBody, NewApiKey, NewKeyBody } from '../../schemas/admin.js';
import { RotateBody } from '../../schemas/key-policy.js';
import type { AuditRecorder } from '../../../domain/audit/audit-log.js';
import type { ApiKeyRecord } from '../../../domain/identity/api-key.types.js';
import { actorOf } from '../../auth/actor.js';
import { projectInPath } from '../../auth/project-access.js';
import { keyToWire } from './mappers.js';

const tags = ['admin'];

export interface KeyAdminDeps {
  projects: ProjectsService;
  audit: AuditRecorder;
}

export function registerKeyAdmin(plain: FastifyInstance, { projects, audit }: KeyAdminDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const keyAccess = { config: { projectAccess: { need: 'manage' as const, projectOf: async (request: FastifyRequest) => (await projects.getKey((request.params as { id: string }).id)).projectId } } };
  const audited = (request: FastifyRequest, action: string, record: ApiKeyRecord, detail: Record<string, unknown> = {}) =>
    audit.record(actorOf(request), { action, targetType: 'api_key', targetId: record.id, projectId: record.projectId, detail: { name: record.name, prefix: record.prefix, ...detail } });

  const createRoute = {
    schema: { tags, params: IdParams, body: NewKeyBody, response: { 200: NewApiKey } },
    ...serializeAsBefore,
    ...projectInPath('use'),
    // No body at all is a key named "default", as in the CLI.
    preValidation: async (request: FastifyRequest) => {
      request.body ??= {};
    },
  };
  scope.post('/projects/:id/keys', createRoute, async (request) => {
    const { name, ...policy } = request.body;
    const { record, key } = await projects.createKey(request.params.id, name, policy);
    await audited(request, 'key.create', record, { policy: Object.keys(policy) });
    return { ...keyToWire(record), key };
  });

  scope.get('/projects/:id/keys', { schema: { tags, params: IdParams, response: { 200: ApiKeyList } }, ...serializeAsBefore, ...projectInPath('use') }, async (request) => {
    const keys = await projects.listKeysWithLastUse(request.params.id);
    return { object: 'list' as const, data: keys.map(({ record, lastUsedAtMs }) => ({ ...keyToWire(record), last_used_at: lastUsedAtMs === null ? null : toUnixSeconds(lastUsedAtMs) })) };
  });

  scope.patch('/keys/:id', { schema: { tags, params: IdParams, body: KeyPatchBody, response: { 200: ApiKeyObject } }, ...serializeAsBefore, ...keyAccess }, async (request) => {
    const record = await projects.updateKey(request.params.id, request.body);
    await audited(request, 'key.update', record, { fields: Object.keys(request.body) });
    return keyToWire(record);
  });

  scope.post('/keys/:id/rotate', { schema: { tags, params: IdParams, body: RotateBody, response: { 200: NewApiKey } }, ...serializeAsBefore, ...keyAccess }, async (request) => {
    const { record, key } = await projects.rotateKey(request.params.id, request.body.grace_seconds);
    await audited(request, 'key.rotate', record, { grace_seconds: request.body.grace_seconds });
    return { ...keyToWire(record), key };
  });

  scope.post('/keys/:id/revoke', { schema: { tags, params: IdParams, response: { 200: ApiKeyObject } }, ...serializeAsBefore, ...keyAccess }, async (request) => {
    const record = await projects.revokeKey(request.params.id);
    await audited(request, 'key.revoke', record);
    return keyToWire(record);
  });
}
