/**
 * Who made a change, for the audit log: read from the request's caller (the admin token,
 * an operator session opened with it, a user's session, an API key) and its client address.
 */
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/audit/audit.types.js';
import type { Principal } from '../../domain/identity/caller.js';

/** The subjects the console's session strategy gives its principals (the admin token's is `operator`). */
export const OPERATOR_SESSION_SUBJECT = 'operator_session';
export const USER_SUBJECT_PREFIX = 'user:';

export const userSubject = (userId: string): string => `${USER_SUBJECT_PREFIX}${userId}`;

/** The user a principal acts for, if a user's session admitted it. */
export const userIdOf = (principal: Principal): string | null =>
  principal.subject?.startsWith(USER_SUBJECT_PREFIX) ? principal.subject.slice(USER_SUBJECT_PREFIX.length) : null;

export function actorOf(request: FastifyRequest): Actor {
  const principal = request.caller?.principal;
  const ip = request.ip ?? null;
  if (!principal) return { type: 'anonymous', id: null, ip };
  const userId = userIdOf(principal);
  if (userId !== null) return { type: 'user', id: userId, ip };
  if (principal.subject === OPERATOR_SESSION_SUBJECT) return { type: 'operator_session', id: null, ip };
  if (principal.keyId !== null) return { type: 'api_key', id: principal.keyId, ip };
  return { type: 'admin_token', id: null, ip };
}
