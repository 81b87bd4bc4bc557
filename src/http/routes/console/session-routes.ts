/**
 * `/console/api/session`: sign in (POST, with the admin token or an API key), the current
 * session (GET) and sign out (DELETE). The cookie holds only a random session id.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { RateLimiter } from '../../../domain/identity/rate-limiter.port.js';
import { csrfTokenOf, signedOut, type ConsoleSessions } from '../../../domain/console/sessions.js';
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

const sessionToWire = (session: ConsoleSession, sessionId: string, mcpPath: string) => ({
  object: 'console_session' as const,
  role: session.role,
  project_id: session.projectId,
  key_id: session.keyId,
  expires_at: toUnixSeconds(session.expiresAtMs),
  csrf_token: csrfTokenOf(sessionId),
  mcp_path: mcpPath,
});

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
  /** Sign-in attempts per client address per minute. */
  signInLimiter: RateLimiter;
  /** Where the MCP endpoint listens, for the console's "Connect an agent" page. */
  mcpPath: string;
}

async function limitAttempts(signInLimiter: RateLimiter, request: FastifyRequest): Promise<void> {
  const decision = await signInLimiter.consume(`ip:${request.ip}`);
  if (!decision.allowed) {
    throw new AppError('rate_limit', 'Too many sign-in attempts: try again in a minute', {
      code: 'sign_in_rate_limited',
      retryAfterSeconds: decision.retryAfterSeconds,
    });
  }
}

const clearCookie = (reply: FastifyReply) => reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });

export function registerSessionRoutes(plain: FastifyInstance, { sessions, signInLimiter, mcpPath }: SessionRouteDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['console'];

  scope.post('/console/api/session', { schema: { tags, summary: 'Sign in to the console', body: SignInBody } }, async (request, reply) => {
    checkOrigin(request);
    await limitAttempts(signInLimiter, request);
    const { sessionId, session } = await sessions.signIn(request.body.credential);
    reply.setCookie(SESSION_COOKIE, sessionId, {
      path: COOKIE_PATH,
      httpOnly: true,
      sameSite: 'strict',
      secure: request.protocol === 'https',
      expires: new Date(session.expiresAtMs),
    });
    return sessionToWire(session, sessionId, mcpPath);
  });

  scope.get('/console/api/session', { schema: { tags, summary: 'The current console session' } }, async (request) => {
    const sessionId = sessionIdOf(request);
    const session = await sessions.resolve(sessionId);
    if (!session || !sessionId) throw signedOut();
    return sessionToWire(session, sessionId, mcpPath);
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
