/**
 * `/admin/v1/users` (operators only) and `/admin/v1/projects/:id/members` (the project's
 * members may read the list; its admins change it). Every change is written to the audit log.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuditRecorder } from '../../../domain/audit/audit-log.js';
import type { ActingRole, PeopleService } from '../../../domain/people/people.service.js';
import type { Membership, User } from '../../../domain/people/people.types.js';
import { readProjectRole } from '../../../domain/people/roles.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { actorOf } from '../../auth/actor.js';
import { projectInPath } from '../../auth/project-access.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { IdParams } from '../../schemas/admin.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { Deleted, MemberChangeBody, MemberList, MemberObject, MemberParams, NewMemberBody, NewUserBody, UserChangeBody, UserList, UserListQuery, UserObject } from '../../schemas/people.js';

export const userToWire = (u: User) => ({
  id: u.id,
  object: 'user' as const,
  email: u.email,
  name: u.name,
  operator: u.operator,
  oidc_issuer: u.oidc?.issuer ?? null,
  created_at: toUnixSeconds(u.createdAtMs),
});

const memberToWire = (m: Membership, u: User) => ({
  object: 'project_member' as const,
  project_id: m.projectId,
  user_id: m.userId,
  email: u.email,
  name: u.name,
  role: m.role,
  granted_by: m.grantedBy,
  created_at: toUnixSeconds(m.createdAtMs),
});

export interface PeopleRouteDeps {
  people: PeopleService;
  audit: AuditRecorder;
}

export function registerPeopleAdmin(plain: FastifyInstance, { people, audit }: PeopleRouteDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['admin'];

  /** The acting person's role in the project: null for the admin token and operators. */
  const actingRole = async (request: FastifyRequest, projectId: string): Promise<ActingRole> => {
    const actor = actorOf(request);
    if (actor.type !== 'user' || (await people.getUser(actor.id!)).operator) return null;
    return (await people.roleIn(projectId, actor.id!)) ?? null;
  };

  scope.post('/users', { schema: { tags, body: NewUserBody, response: { 200: UserObject } }, ...serializeAsBefore }, async (request) => {
    const user = await people.createUser(request.body);
    await audit.record(actorOf(request), { action: 'user.create', targetType: 'user', targetId: user.id, projectId: null, detail: { email: user.email, name: user.name, operator: user.operator } });
    return userToWire(user);
  });

  scope.get('/users', { schema: { tags, querystring: UserListQuery, response: { 200: UserList } }, ...serializeAsBefore }, async (request) =>
    toListPage(await people.listUsers(readLimit(request.query.limit, 100, 20), request.query.after), userToWire),
  );

  scope.get('/users/:id', { schema: { tags, params: IdParams, response: { 200: UserObject } }, ...serializeAsBefore }, async (request) => userToWire(await people.getUser(request.params.id)));

  scope.patch('/users/:id', { schema: { tags, params: IdParams, body: UserChangeBody, response: { 200: UserObject } }, ...serializeAsBefore }, async (request) => {
    const user = await people.updateUser(request.params.id, request.body);
    await audit.record(actorOf(request), { action: 'user.update', targetType: 'user', targetId: user.id, projectId: null, detail: { ...request.body } });
    return userToWire(user);
  });

  scope.delete('/users/:id', { schema: { tags, params: IdParams, response: { 200: Deleted } }, ...serializeAsBefore }, async (request) => {
    await people.deleteUser(request.params.id);
    await audit.record(actorOf(request), { action: 'user.delete', targetType: 'user', targetId: request.params.id, projectId: null, detail: {} });
    return { id: request.params.id, object: 'user.deleted', deleted: true as const };
  });

  scope.get('/projects/:id/members', { schema: { tags, params: IdParams, response: { 200: MemberList } }, ...serializeAsBefore, ...projectInPath('read') }, async (request) => ({
    object: 'list' as const,
    data: (await people.listMembers(request.params.id)).map(({ membership, user }) => memberToWire(membership, user)),
  }));

  const putMember = async (request: FastifyRequest, projectId: string, userId: string, rawRole: unknown, mode: 'add' | 'change') => {
    const role = readProjectRole(rawRole, 'role');
    const { membership, before } = await people.putMember(projectId, userId, role, await actingRole(request, projectId.toLowerCase()), mode);
    const detail = { role, ...(before !== null && { previous_role: before }) };
    await audit.record(actorOf(request), { action: mode === 'add' ? 'member.add' : 'member.update', targetType: 'user', targetId: userId, projectId: membership.projectId, detail });
    return memberToWire(membership, await people.getUser(userId));
  };

  const memberSchema = { tags, params: IdParams, body: NewMemberBody, response: { 200: MemberObject } };
  scope.post('/projects/:id/members', { schema: memberSchema, ...serializeAsBefore, ...projectInPath('manage') }, async (request) =>
    putMember(request, request.params.id, request.body.user_id, request.body.role, 'add'),
  );

  const changeSchema = { tags, params: MemberParams, body: MemberChangeBody, response: { 200: MemberObject } };
  scope.patch('/projects/:id/members/:user_id', { schema: changeSchema, ...serializeAsBefore, ...projectInPath('manage') }, async (request) =>
    putMember(request, request.params.id, request.params.user_id, request.body.role, 'change'),
  );

  scope.delete('/projects/:id/members/:user_id', { schema: { tags, params: MemberParams, response: { 200: Deleted } }, ...serializeAsBefore, ...projectInPath('manage') }, async (request) => {
    const { id: projectId, user_id: userId } = request.params;
    const removed = await people.removeMember(projectId, userId, await actingRole(request, projectId.toLowerCase()));
    await audit.record(actorOf(request), { action: 'member.remove', targetType: 'user', targetId: userId, projectId: removed.projectId, detail: { role: removed.role } });
    return { id: userId, object: 'project_member.deleted', deleted: true as const };
  });
}
