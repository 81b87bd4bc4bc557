/**
 * Users and their roles in projects: what the admin API manages and an OIDC sign-in
 * provisions. A project admin manages members, but only an owner (or an operator) gives,
 * changes or takes away the owner role, so an admin cannot make themselves an owner.
 */
import { AppError, invalidRequest } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Page } from '../shared/pagination.js';
import type { Project } from '../projects/project.types.js';
import type { Membership, PeopleStore, User, UserProject } from './people.types.js';
import type { ProjectRole } from './people.types.js';

export interface PeopleServiceDeps {
  store: PeopleStore;
  projects: { getProject(id: string): Promise<Project> };
  clock: Clock;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAX_EMAIL = 320;
const MAX_NAME = 200;

export const userNotFound = (id: string) => new AppError('not_found', `User not found: ${id}`, { code: 'user_not_found' });
const memberNotFound = (userId: string) => new AppError('not_found', `Not a member of this project: ${userId}`, { code: 'member_not_found' });

function readEmail(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_EMAIL || !EMAIL.test(value.trim())) throw invalidRequest('email must be an email address', 'email', 'invalid_email');
  return value.trim().toLowerCase();
}

function readName(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > MAX_NAME) throw invalidRequest(`name must be text of at most ${MAX_NAME} characters`, 'name');
  return value.trim() || null;
}

/** The role the acting person holds in the project: null for an operator (or the admin token), who may do anything. */
export type ActingRole = ProjectRole | null;

function checkOwnerRule(acting: ActingRole, before: ProjectRole | undefined, after: ProjectRole | undefined): void {
  if (acting === null || acting === 'owner') return;
  if (before === 'owner' || after === 'owner') {
    throw new AppError('permission', 'Only an owner of the project gives, changes or takes away the owner role', { code: 'owner_required' });
  }
}

export class PeopleService {
  constructor(private readonly deps: PeopleServiceDeps) {}

  async createUser(input: { email: unknown; name?: unknown; operator?: boolean }): Promise<User> {
    const operator = input.operator ?? false;
    const user: User = { id: newId('user_'), email: readEmail(input.email), name: readName(input.name), operator, operatorByHand: operator, oidc: null, createdAtMs: this.deps.clock.nowMs() };
    const stored = await this.deps.store.insertUser(user);
    if (!stored) throw new AppError('conflict', `A user with email ${user.email} exists`, { code: 'user_exists', param: 'email' });
    return stored;
  }

  async getUser(id: string): Promise<User> {
    const user = await this.deps.store.findUser(id);
    if (!user) throw userNotFound(id);
    return user;
  }

  async listUsers(limit: number, after?: string): Promise<Page<User>> {
    const page = await this.deps.store.listUsers(limit, after);
    if (!page) throw invalidRequest(`after must be the id of a user, got "${after}"`, 'after', 'invalid_cursor');
    return page;
  }

  async updateUser(id: string, change: { name?: unknown; operator?: boolean }): Promise<User> {
    const user = await this.deps.store.updateUser(id, { ...(change.name !== undefined && { name: readName(change.name) }), ...(change.operator !== undefined && { operator: change.operator }) });
    if (!user) throw userNotFound(id);
    return user;
  }

  async deleteUser(id: string): Promise<void> {
    if (!(await this.deps.store.deleteUser(id))) throw userNotFound(id);
  }

  async listMembers(projectId: string): Promise<Array<{ membership: Membership; user: User }>> {
    const project = await this.deps.projects.getProject(projectId);
    const members = await this.deps.store.listMembers(project.id);
    const users = await Promise.all(members.map((m) => this.deps.store.findUser(m.userId)));
    return members.map((membership, i) => ({ membership, user: users[i]! }));
  }

  /** `add`: a new member (409 if they are one); `change`: a member's new role (404 if they are none). `before`: their role until now. */
  async putMember(projectId: string, userId: string, role: ProjectRole, acting: ActingRole, mode: 'add' | 'change'): Promise<{ membership: Membership; before: ProjectRole | null }> {
    const project = await this.deps.projects.getProject(projectId);
    await this.getUser(userId);
    const existing = await this.deps.store.findMembership(project.id, userId);
    if (mode === 'add' && existing) throw new AppError('conflict', `${userId} is a member already, as ${existing.role}: change their role instead`, { code: 'member_exists', param: 'user_id' });
    if (mode === 'change' && !existing) throw memberNotFound(userId);
    checkOwnerRule(acting, existing?.role, role);
    // Given by hand, it is the admin's from now on: a sign-in's claims no longer change it.
    const membership = await this.deps.store.putMembership({ projectId: project.id, userId, role, createdAtMs: existing?.createdAtMs ?? this.deps.clock.nowMs(), grantedBy: 'admin' });
    return { membership, before: existing?.role ?? null };
  }

  async removeMember(projectId: string, userId: string, acting: ActingRole): Promise<Membership> {
    const project = await this.deps.projects.getProject(projectId);
    const existing = await this.deps.store.findMembership(project.id, userId);
    if (!existing) throw memberNotFound(userId);
    checkOwnerRule(acting, existing.role, undefined);
    await this.deps.store.deleteMembership(project.id, userId);
    return existing;
  }

  /** The user's role in the project, if they are a member. */
  async roleIn(projectId: string, userId: string): Promise<ProjectRole | undefined> {
    return (await this.deps.store.findMembership(projectId.toLowerCase(), userId))?.role;
  }

  projectsOf(userId: string): Promise<UserProject[]> {
    return this.deps.store.projectsOf(userId);
  }

  /**
   * The user an OIDC sign-in names (found by issuer and subject, else by email, else
   * created), with what the claims map to applied as of this sign-in: the operator flag and
   * the project roles the claims give are set, raised or lowered, and memberships an
   * earlier sign-in's claims gave but these do not are taken back. What was given by hand
   * (the admin API, the console) is left as it is.
   */
  async provision(identity: { issuer: string; subject: string; email: unknown; emailVerified: boolean; name: unknown }, grants: { operator: boolean; roles: ReadonlyMap<string, ProjectRole> }): Promise<User> {
    const { store } = this.deps;
    const oidc = { issuer: identity.issuer, subject: identity.subject };
    // An existing user is taken by email only when the provider vouches for the address.
    let user = (await store.findByOidc(oidc.issuer, oidc.subject)) ?? (identity.emailVerified ? await store.findByEmail(readEmail(identity.email)) : undefined);
    if (!user) user = await this.createUser({ email: identity.email, name: identity.name });
    user = (await store.updateUser(user.id, { oidc, operatorMapped: grants.operator, ...(user.name === null && { name: readName(identity.name) }) }))!;
    const held = await this.#takeBackUngranted(user.id, grants.roles);
    for (const [projectId, role] of grants.roles) {
      const existing = held.get(projectId);
      if (existing?.grantedBy === 'admin' || existing?.role === role) continue;
      await store.putMembership({ projectId, userId: user.id, role, createdAtMs: existing?.createdAtMs ?? this.deps.clock.nowMs(), grantedBy: 'mapping' });
    }
    return user;
  }

  /** A person whose claims now map to nothing (refused at sign-in): what earlier claims gave them is taken back. */
  async withdrawMapped(issuer: string, subject: string): Promise<void> {
    const user = await this.deps.store.findByOidc(issuer, subject);
    if (!user) return;
    await this.deps.store.updateUser(user.id, { operatorMapped: false });
    await this.#takeBackUngranted(user.id, new Map());
  }

  /** Deletes the user's memberships the claims gave that `roles` no longer names; the memberships held after. */
  async #takeBackUngranted(userId: string, roles: ReadonlyMap<string, ProjectRole>): Promise<Map<string, Membership>> {
    const held = new Map((await this.deps.store.membershipsOf(userId)).map((m) => [m.projectId, m]));
    for (const membership of [...held.values()]) {
      if (membership.grantedBy !== 'mapping' || roles.has(membership.projectId)) continue;
      await this.deps.store.deleteMembership(membership.projectId, userId);
      held.delete(membership.projectId);
    }
    return held;
  }
}
