/**
 * The admin API's key routes: create a project's key (with its policy), list a project's
 * keys, change a key's name and policy, rotate its secret, and revoke it. Each change is
 * written to the audit log. Admins and owners (the project's `manage` permission, roles.ts)
 * manage every key and policy. A member makes keys for themselves: a key a user's session
 * makes is owned by that user, and a member lists, renames, rotates and revokes only the
 * keys they own, and sets no policy. A member acting on another's key is refused as any
 * role too low is (403 `role_required`); another project's key is not found (404).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { AppError } from '../../../domain/shared/errors.js';
import { roleAllows } from '../../../domain/people/roles.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ApiKeyList, ApiKeyObject, IdParams, KeyPatchBody, NewApiKey, NewKeyBody } from '../../schemas/admin.js';
import { RotateBody } from '../../schemas/key-policy.js';
import type { AuditRecorder } from '../../../domain/audit/audit-log.js';
import type { ApiKeyRecord } from '../../../domain/identity/api-key.types.js';
import { actorOf, userIdOf } from '../../auth/actor.js';
import { projectInPath, type ProjectAccess } from '../../auth/project-access.js';
import { keyToWire } from './mappers.js';

const tags = ['admin'];

export interface KeyAdminDeps {
  projects: ProjectsService;
  audit: AuditRecorder;
}

/** The user whose session made the request, when one did (they own the keys they make). */
const userOf = (request: FastifyRequest): string | null => (request.caller ? userIdOf(request.caller.principal) : null);

/** Whether the caller is a user whose role in the project does not manage it: they see and change only their own keys. */
const ownKeysOnly = (request: FastifyRequest): boolean => {
  const role = request.caller?.principal.projectRole;
  return role !== undefined && !roleAllows(role, 'manage');
};

/** 403 when a member names policy fields: only admins and owners set a key's policy. */
function refusePolicyFromMember(request: FastifyRequest, fields: string[]): void {
  if (fields.length === 0 || !ownKeysOnly(request)) return;
  throw new AppError('permission', `Setting a key's policy (${fields.join(', ')}) needs the admin role in the project; you are a ${request.caller!.principal.projectRole}`, {
    code: 'role_required',
    param: fields[0]!,
  });
}

/** A key route's access: `manage` in the key's project, or `use` for the user who owns the key. The key is read once per request. */
function keyAccess(projects: ProjectsService): { config: { projectAccess: ProjectAccess } } {
  const read = new WeakMap<FastifyRequest, Promise<ApiKeyRecord>>();
  const keyOf = (request: FastifyRequest): Promise<ApiKeyRecord> => {
    let key = read.get(request);
    if (!key) read.set(request, (key = projects.getKey((request.params as { id: string }).id)));
    return key;
  };
  return {
    config: {
      projectAccess: {
        need: 'manage',
        projectOf: async (request) => (await keyOf(request)).projectId,
        owned: { need: 'use', ownerOf: async (request) => (await keyOf(request)).ownerUserId ?? null },
      },
    },
  };
}

export function registerKeyAdmin(plain: FastifyInstance, { projects, audit }: KeyAdminDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const ownedKey = keyAccess(projects);
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
    refusePolicyFromMember(request, Object.keys(policy));
    const { record, key } = await projects.createKey(request.params.id, name, policy, userOf(request));
    await audited(request, 'key.create', record, Object.keys(policy).length > 0 ? { policy: Object.keys(policy) } : {});
    return { ...keyToWire(record), key };
  });

  scope.get('/projects/:id/keys', { schema: { tags, params: IdParams, response: { 200: ApiKeyList } }, ...serializeAsBefore, ...projectInPath('use') }, async (request) => {
    const owner = ownKeysOnly(request) ? (userOf(request) ?? undefined) : undefined;
    const keys = await projects.listKeysWithLastUse(request.params.id, owner);
    return { object: 'list' as const, data: keys.map(({ record, lastUsedAtMs }) => ({ ...keyToWire(record), last_used_at: lastUsedAtMs === null ? null : toUnixSeconds(lastUsedAtMs) })) };
  });

  scope.patch('/keys/:id', { schema: { tags, params: IdParams, body: KeyPatchBody, response: { 200: ApiKeyObject } }, ...serializeAsBefore, ...ownedKey }, async (request) => {
    refusePolicyFromMember(request, Object.keys(request.body).filter((field) => field !== 'name'));
    const record = await projects.updateKey(request.params.id, request.body);
    await audited(request, 'key.update', record, { fields: Object.keys(request.body) });
    return keyToWire(record);
  });

  scope.post('/keys/:id/rotate', { schema: { tags, params: IdParams, body: RotateBody, response: { 200: NewApiKey } }, ...serializeAsBefore, ...ownedKey }, async (request) => {
    const { record, key } = await projects.rotateKey(request.params.id, request.body.grace_seconds);
    await audited(request, 'key.rotate', record, { grace_seconds: request.body.grace_seconds });
    return { ...keyToWire(record), key };
  });

  scope.post('/keys/:id/revoke', { schema: { tags, params: IdParams, response: { 200: ApiKeyObject } }, ...serializeAsBefore, ...ownedKey }, async (request) => {
    const record = await projects.revokeKey(request.params.id);
    await audited(request, 'key.revoke', record);
    return keyToWire(record);
  });
}
