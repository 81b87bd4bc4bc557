/**
 * Console sign-in through the identity provider: `GET /console/api/session/oidc/start`
 * keeps the flow under a random id in an HttpOnly cookie and redirects to the provider;
 * `GET /console/api/session/oidc/callback` completes it, opens the session (the console's
 * usual cookie) and returns the browser to the console, or to its sign-in page with
 * `?sign_in_error=<code>` when refused. Every outcome is audited. Both count against the
 * sign-in attempts allowed per client address (`console.sign_in_attempts_per_minute`), as a
 * sign-in with a key does: past it, the browser is sent back with `sign_in_rate_limited`.
 * `GET /console/api/session/options` tells the sign-in page which ways to sign in there are.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AuditRecorder } from '../../../domain/audit/audit-log.js';
import { UnmappedPerson, type OidcSignIn } from '../../../domain/console/oidc-sign-in.js';
import { AppError } from '../../../domain/shared/errors.js';
import type { RateLimiter } from '../../../domain/identity/rate-limiter.port.js';
import { limitAttempts, setSessionCookie } from './session-routes.js';

const FLOW_COOKIE = 'sluice_oidc_flow';
const FLOW_PATH = '/console/api/session/oidc';
const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
});

export interface OidcRouteDeps {
  /** Null when no identity provider is configured: the options say so and the flow's routes answer 404. */
  signIn: OidcSignIn | null;
  audit: AuditRecorder;
  /** Sign-in attempts per client address per minute, shared with the other ways to sign in. */
  signInLimiter: RateLimiter;
}

const notConfigured = () => new AppError('not_found', 'No identity provider is configured', { code: 'sign_in_not_configured' });

/** The failure's audit entry names what the token said of the person when it was good (an unmapped person). */
async function auditFailure(audit: AuditRecorder, request: FastifyRequest, err: AppError): Promise<void> {
  const claims = err instanceof UnmappedPerson ? err.claims : null;
  const who = claims ? (typeof claims.email === 'string' ? claims.email : claims.sub) : null;
  await audit.record(
    { type: 'anonymous', id: who, ip: request.ip },
    { action: 'sign_in.failure', targetType: 'console_session', targetId: null, projectId: null, detail: { method: 'oidc', reason: err.code, ...(claims && { subject: claims.sub }) } },
  );
}

export function registerOidcRoutes(plain: FastifyInstance, { signIn, audit, signInLimiter }: OidcRouteDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['console'];

  scope.get('/console/api/session/options', { schema: { tags, summary: 'How one may sign in to the console' } }, async () => ({
    object: 'sign_in_options' as const,
    oidc: signIn === null ? null : { provider_name: signIn.providerName, start_url: `${FLOW_PATH}/start` },
  }));

  scope.get(`${FLOW_PATH}/start`, { schema: { tags, summary: 'Sign in through the identity provider (a redirect)' } }, async (request, reply) => {
    if (!signIn) throw notConfigured();
    try {
      await limitAttempts(signInLimiter, request);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'rate_limit') return refuseTo(reply, err);
      throw err;
    }
    const { flowId, authorizationUrl } = await signIn.begin(`${request.protocol}://${request.host}${FLOW_PATH}/callback`);
    // Lax: the provider's redirect back is a cross-site navigation, on which a Strict cookie is not sent.
    reply.setCookie(FLOW_COOKIE, flowId, { path: FLOW_PATH, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', maxAge: 600 });
    return reply.redirect(authorizationUrl, 302);
  });

  scope.get(`${FLOW_PATH}/callback`, { schema: { tags, summary: 'Where the identity provider returns the browser', querystring: CallbackQuery } }, async (request, reply) => {
    if (!signIn) throw notConfigured();
    reply.clearCookie(FLOW_COOKIE, { path: FLOW_PATH });
    const callbackUrl = new URL(request.url, 'http://callback.invalid');
    try {
      await limitAttempts(signInLimiter, request);
      const { signedIn, user } = await signIn.complete(request.cookies[FLOW_COOKIE] || undefined, callbackUrl);
      await audit.record({ type: 'user', id: user.id, ip: request.ip }, { action: 'sign_in.success', targetType: 'console_session', targetId: null, projectId: null, detail: { method: 'oidc', email: user.email } });
      setSessionCookie(request, reply, signedIn);
      return reply.redirect('/console/', 302);
    } catch (err) {
      if (!(err instanceof AppError) || (err.kind !== 'authentication' && err.kind !== 'upstream' && err.kind !== 'rate_limit')) throw err;
      await auditFailure(audit, request, err);
      return refuseTo(reply, err);
    }
  });
}

function refuseTo(reply: FastifyReply, err: AppError): FastifyReply {
  return reply.redirect(`/console/?sign_in_error=${encodeURIComponent(err.code ?? 'sign_in_failed')}`, 302);
}
