/**
 * The console's strategy: the session cookie (and, on a state-changing request, the CSRF
 * token header) admits the browser as the Caller its credential would have been: a
 * developer session is its API key's caller; an operator session is the operator, on the
 * admin routes, or acting in the project it names with `x-project-id` on the /v1 routes.
 */
import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { apiKeyPrincipal, operatorPrincipal, type Caller } from '../../domain/identity/caller.js';
import type { Meter } from '../../domain/billing/meter.js';
import { csrfTokenOf, signedOut, type ConsoleSessions } from '../../domain/console/sessions.js';
import type { ConsoleSession } from '../../domain/console/session-store.port.js';
import type { ProjectsService } from '../../domain/projects/projects.service.js';
import { AppError, invalidRequest } from '../../domain/shared/errors.js';
import { headerOf, type AuthStrategy } from './strategy.js';

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

export interface SessionStrategyOptions {
  sessions: ConsoleSessions;
  projects: ProjectsService;
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

  async #principal(request: FastifyRequest, session: ConsoleSession) {
    if (this.options.scope === 'operator') {
      if (session.role !== 'operator') throw new AppError('permission', 'This needs an operator session (signed in with the admin token)', { code: 'operator_required' });
      return operatorPrincipal();
    }
    if (session.role === 'developer') return apiKeyPrincipal(session.projectId!, session.keyId);
    const projectId = headerOf(request, 'x-project-id');
    if (projectId === undefined) throw invalidRequest('Choose a project: an operator session names it with x-project-id', 'x-project-id', 'project_required');
    const project = await this.options.projects.getProject(projectId);
    return operatorPrincipal(project.id, 'console');
  }
}
