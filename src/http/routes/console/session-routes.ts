/**
 * `/console/api/session`: sign in (POST, with the admin token or an API key), the current
 * session (GET) and sign out (DELETE). The cookie holds only a random session id.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { RateLimiter } from '../../../domain/identity/rate-limiter.port.js';
import { csrfTokenOf, signedOut, type ConsoleSessions, type SignedIn } from '../../../domain/console/sessions.js';
import type { AuditRecorder } from '../../../domain/audit/audit-log.js';
import type { Actor, AuditChange } from '../../../domain/audit/audit.types.js';
import type { PeopleService } from '../../../domain/people/people.service.js';
import type { ConsoleSession } from '../../../domain/console/session-store.port.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { AppError } from '../../../domain/shared/errors.js';
import { checkCsrf, SESSION_COOKIE, sessionIdOf } from '../../auth/session-strategy.js';
import { headerOf } from '../../auth/strategy.js';

const SignInBody = Type.Object(
  { credential: Type.String({ minLength: 1, maxLength: 512, description: 'the admin token, or an API key' }) },
  { additionalProperties: false },
);

const COOKIE_PATH = '/console';

const baseToWire = (session: ConsoleSession, sessionId: string, mcpPath: string) => ({
  object: 'console_session' as const,
  role: session.role,
  project_id: session.projectId,
  key_id: session.keyId,
  expires_at: toUnixSeconds(session.expiresAtMs),
  csrf_token: csrfTokenOf(sessionId),
  mcp_path: mcpPath,
});

/** A user's session also names the user and the projects they are a member of, with their role in each. */
async function sessionToWire(session: ConsoleSession, sessionId: string, mcpPath: string, people: PeopleService) {
  const base = baseToWire(session, sessionId, mcpPath);
  if (session.userId === null) return base;
  const [user, projects] = await Promise.all([people.getUser(session.userId), people.projectsOf(session.userId)]);
  return {
    ...base,
    user: { id: user.id, email: user.email, name: user.name, operator: user.operator },
    projects: projects.map((p) => ({ id: p.projectId, name: p.projectName, role: p.role })),
  };
}

/** A sign-in posted from another site's page (login CSRF) is refused; same-origin or no Origin (curl) passes. */
function checkOrigin(request: FastifyRequest): void {
  const origin = headerOf(request, 'origin');
  if (origin === undefined) return;
  let host: string | null = null;
  try {
    host = new URL(origin).host;
  } catch {
    host = null;
  }
  if (host !== request.headers.host) throw new AppError('permission', 'Sign-in is only accepted from the console itself', { code: 'cross_origin_sign_in' });
}

export interface SessionRouteDeps {
  sessions: ConsoleSessions;
  people: PeopleService;
  /** Every sign-in, successful or not. */
  audit: AuditRecorder;
  /** Sign-in attempts per client address per minute. */
  signInLimiter: RateLimiter;
  /** Where the MCP endpoint listens, for the console's "Connect an agent" page. */
  mcpPath: string;
}

/** Counts a sign-in attempt from the request's address; throws 429 `sign_in_rate_limited` past the limit. */
export async function limitAttempts(signInLimiter: RateLimiter, request: FastifyRequest): Promise<void> {
  const decision = await signInLimiter.consume(`ip:${request.ip}`);
  if (!decision.allowed) {
    throw new AppError('rate_limit', 'Too many sign-in attempts: try again in a minute', {
      code: 'sign_in_rate_limited',
      retryAfterSeconds: decision.retryAfterSeconds,
    });
  }
}

const clearCookie = (reply: FastifyReply) => reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });

/** Sets the session cookie: HttpOnly, SameSite=Strict, only under /console. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn): void {
  reply.setCookie(SESSION_COOKIE, signedIn.sessionId, {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    expires: new Date(signedIn.session.expiresAtMs),
  });
}

/** The audit entry of a sign-in with the admin token or an API key. */
function signInEntry(request: FastifyRequest, session: ConsoleSession | null): [Actor, AuditChange] {
  const ip = request.ip;
  if (session === null) return [{ type: 'anonymous', id: null, ip }, { action: 'sign_in.failure', targetType: 'console_session', targetId: null, projectId: null, detail: { method: 'credential' } }];
  const actor: Actor = session.role === 'operator' ? { type: 'operator_session', id: null, ip } : { type: 'api_key', id: session.keyId, ip };
  return [actor, { action: 'sign_in.success', targetType: 'console_session', targetId: null, projectId: session.projectId, detail: { method: session.role === 'operator' ? 'admin_token' : 'api_key' } }];
}

export function registerSessionRoutes(plain: FastifyInstance, { sessions, people, audit, signInLimiter, mcpPath }: SessionRouteDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['console'];

  scope.post('/console/api/session', { schema: { tags, summary: 'Sign in to the console', body: SignInBody } }, async (request, reply) => {
    checkOrigin(request);
    await limitAttempts(signInLimiter, request);
    let signedIn: SignedIn;
    try {
      signedIn = await sessions.signIn(request.body.credential);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'authentication') await audit.record(...signInEntry(request, null));
      throw err;
    }
    await audit.record(...signInEntry(request, signedIn.session));
    setSessionCookie(request, reply, signedIn);
    return sessionToWire(signedIn.session, signedIn.sessionId, mcpPath, people);
  });

  scope.get('/console/api/session', { schema: { tags, summary: 'The current console session' } }, async (request) => {
    const sessionId = sessionIdOf(request);
    const session = await sessions.resolve(sessionId);
    if (!session || !sessionId) throw signedOut();
    return sessionToWire(session, sessionId, mcpPath, people);
  });

  scope.delete('/console/api/session', { schema: { tags, summary: 'Sign out of the console' } }, async (request, reply) => {
    const sessionId = sessionIdOf(request);
    if (sessionId && (await sessions.resolve(sessionId))) {
      checkCsrf(request, sessionId);
      await sessions.signOut(sessionId);
    }
    clearCookie(reply);
    return { object: 'console_session.deleted' as const, deleted: true };
  });
}
