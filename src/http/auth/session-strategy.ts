/**
 * The console's strategy: the session cookie (and, on a state-changing request, the CSRF
 * token header) admits the browser as the Caller its credential would have been: a
 * developer session is its API key's caller; an operator session is the operator, on the
 * admin routes, or acting in the project it names with `x-project-id` on the /v1 routes.
 * A user's session is an operator's when the user is one; otherwise it acts in a project
 * it is a member of, as its role there allows (roles.ts): on /v1, a viewer only reads; on
 * an admin route, the route declares the project and the permission (project-access.ts).
 * Another project is not found (404), whatever the user's roles elsewhere.
 */
import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { apiKeyPrincipal, operatorPrincipal, type Caller, type Principal } from '../../domain/identity/caller.js';
import type { Meter } from '../../domain/billing/meter.js';
import { csrfTokenOf, signedOut, type ConsoleSessions } from '../../domain/console/sessions.js';
import type { ConsoleSession } from '../../domain/console/session-store.port.js';
import type { ProjectsService } from '../../domain/projects/projects.service.js';
import { AppError, invalidRequest } from '../../domain/shared/errors.js';
import type { User } from '../../domain/people/people.types.js';
import { leastRoleFor, roleAllows, type ProjectPermission, type ProjectRole } from '../../domain/people/roles.js';
import { headerOf, type AuthStrategy } from './strategy.js';
import { OPERATOR_SESSION_SUBJECT, userSubject } from './actor.js';
import type { ProjectAccess } from './project-access.js';

export const SESSION_COOKIE = 'sluice_session';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session id the request's cookie carries (cookies parsed by @fastify/cookie). */
export const sessionIdOf = (request: FastifyRequest): string | undefined => request.cookies?.[SESSION_COOKIE] || undefined;

/** Throws 403 unless the request carries its session's CSRF token (safe methods need none). */
export function checkCsrf(request: FastifyRequest, sessionId: string): void {
  if (SAFE_METHODS.has(request.method)) return;
  const presented = Buffer.from(headerOf(request, CSRF_HEADER) ?? '');
  const expected = Buffer.from(csrfTokenOf(sessionId));
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    throw new AppError('permission', `Missing or wrong ${CSRF_HEADER} header`, { code: 'csrf_token_invalid' });
  }
}

/** The users behind user sessions, and their roles (people.service.ts). */
export interface SessionUsers {
  getUser(id: string): Promise<User>;
  roleIn(projectId: string, userId: string): Promise<ProjectRole | undefined>;
}

const operatorRequired = () => new AppError('permission', 'This needs an operator session (signed in with the admin token, or as an operator)', { code: 'operator_required' });
const projectNotFound = (id: string) => new AppError('not_found', `Project not found: ${id}`, { code: 'project_not_found' });

export interface SessionStrategyOptions {
  sessions: ConsoleSessions;
  projects: ProjectsService;
  users: SessionUsers;
  meter: Meter;
  /** `project`: the /v1 routes, in one project; `operator`: the admin routes, operators only. */
  scope: 'project' | 'operator';
}

export class SessionStrategy implements AuthStrategy {
  readonly needs = 'headers';

  constructor(private readonly options: SessionStrategyOptions) {}

  async authenticate(request: FastifyRequest): Promise<Caller> {
    const sessionId = sessionIdOf(request);
    const session = await this.options.sessions.resolve(sessionId);
    if (!session || !sessionId) throw signedOut();
    checkCsrf(request, sessionId);
    return { principal: await this.#principal(request, session), meter: this.options.meter };
  }

  async #principal(request: FastifyRequest, session: ConsoleSession): Promise<Principal> {
    if (session.role === 'user') return this.#userPrincipal(request, session.userId!);
    if (session.role === 'developer') {
      if (this.options.scope === 'operator') throw operatorRequired();
      return apiKeyPrincipal(session.projectId!, session.keyId);
    }
    return this.#operatorPrincipal(request, OPERATOR_SESSION_SUBJECT);
  }

  async #operatorPrincipal(request: FastifyRequest, subject: string): Promise<Principal> {
    if (this.options.scope === 'operator') return { ...operatorPrincipal(), subject };
    const project = await this.options.projects.getProject(chosenProject(request));
    return { ...operatorPrincipal(project.id, 'console'), subject };
  }

  async #userPrincipal(request: FastifyRequest, userId: string): Promise<Principal> {
    const user = await this.options.users.getUser(userId).catch(() => {
      throw signedOut();
    });
    const subject = userSubject(user.id);
    if (user.operator) return this.#operatorPrincipal(request, subject);
    if (this.options.scope === 'project') {
      const projectId = chosenProject(request).toLowerCase();
      await this.#requireRole(projectId, user.id, SAFE_METHODS.has(request.method) ? 'read' : 'use');
      return { ...operatorPrincipal(projectId, 'console'), subject };
    }
    const access = request.routeOptions.config.projectAccess;
    const projectId = access && (await access.projectOf(request));
    if (!access || projectId === undefined) throw operatorRequired();
    const role = await this.#roleIn(projectId.toLowerCase(), user.id);
    if (!roleAllows(role, access.need) && !(await ownsWithRole(request, access, user.id, role))) throw roleRequired(access.need, role);
    return { ...operatorPrincipal(), subject, projectRole: role };
  }

  /** 404 when the user is no member of the project (as for a project that does not exist); 403 when their role does not allow `need`. */
  async #requireRole(projectId: string, userId: string, need: ProjectPermission): Promise<void> {
    const role = await this.#roleIn(projectId, userId);
    if (!roleAllows(role, need)) throw roleRequired(need, role);
  }

  async #roleIn(projectId: string, userId: string): Promise<ProjectRole> {
    const role = await this.options.users.roleIn(projectId, userId);
    if (role === undefined) throw projectNotFound(projectId);
    return role;
  }
}

const roleRequired = (need: ProjectPermission, role: ProjectRole) =>
  new AppError('permission', `This needs the ${leastRoleFor(need)} role in the project; you are ${role === 'admin' ? 'an' : 'a'} ${role}`, { code: 'role_required' });

/** Whether the route lets the owner of its object act with a lesser permission, the user owns it, and their role holds that one. */
async function ownsWithRole(request: FastifyRequest, access: ProjectAccess, userId: string, role: ProjectRole): Promise<boolean> {
  if (!access.owned || !roleAllows(role, access.owned.need)) return false;
  return (await access.owned.ownerOf(request)) === userId;
}

function chosenProject(request: FastifyRequest): string {
  const projectId = headerOf(request, 'x-project-id');
  if (projectId === undefined) throw invalidRequest('Choose a project: an operator or user session names it with x-project-id', 'x-project-id', 'project_required');
  return projectId;
}
