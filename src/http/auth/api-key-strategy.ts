/**
 * The API-key strategy of `/v1`: `x-api-key: <key>` or `Authorization: Bearer <key>` (so
 * the OpenAI SDKs work unchanged; `x-api-key` wins), or on a WebSocket upgrade without
 * either, the `openai-insecure-api-key.<key>` subprotocol; optionally pinned to a project by
 * `x-project-id`. Callers pay from their project's credit.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller, Principal } from '../../domain/identity/caller.js';
import type { ApiKeyAuthenticator } from '../../domain/identity/authenticator.js';
import type { Meter } from '../../domain/billing/meter.js';
import { AppError } from '../../domain/shared/errors.js';
import { headerOf, type AuthStrategy } from './strategy.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** A browser cannot set headers on a WebSocket: it may offer its key as this subprotocol (OpenAI's name), never selected back. */
export const KEY_SUBPROTOCOL_PREFIX = 'openai-insecure-api-key.';

/** The key offered as a WebSocket subprotocol on an upgrade request (`openai-insecure-api-key.<key>`). */
function subprotocolApiKey(request: FastifyRequest): string | undefined {
  const offered = headerOf(request, 'sec-websocket-protocol');
  if (offered === undefined || headerOf(request, 'upgrade')?.toLowerCase() !== 'websocket') return undefined;
  for (const protocol of offered.split(',')) {
    const name = protocol.trim();
    if (name.startsWith(KEY_SUBPROTOCOL_PREFIX) && name.length > KEY_SUBPROTOCOL_PREFIX.length) return name.slice(KEY_SUBPROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** The key the request presents, or undefined when it presents none. */
export function presentedApiKey(request: FastifyRequest): string | undefined {
  const apiKey = headerOf(request, 'x-api-key');
  if (apiKey) return apiKey.trim();
  const authorization = headerOf(request, 'authorization');
  if (authorization === undefined) return subprotocolApiKey(request);
  const match = BEARER.exec(authorization);
  if (match) return match[1];
  // Only a word that looks like a scheme is echoed: the header may hold a bare key.
  const scheme = /^([A-Za-z]{1,16})\s/.exec(authorization)?.[1];
  throw new AppError(
    'authentication',
    `Unsupported Authorization header${scheme ? ` scheme "${scheme}"` : ''}: expected "Authorization: Bearer <API key>" or "x-api-key: <API key>"`,
    { code: 'invalid_authorization_header' },
  );
}

export class ApiKeyStrategy implements AuthStrategy {
  readonly needs = 'headers';

  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly meter: Meter,
  ) {}

  authenticate(request: FastifyRequest): Caller | Promise<Caller> {
    const key = presentedApiKey(request);
    const projectId = headerOf(request, 'x-project-id');
    const principal = this.authenticator.authenticateCached(key, projectId);
    if (principal) return this.#caller(principal);
    return this.authenticator.authenticate(key, projectId).then((found) => this.#caller(found));
  }

  #caller(principal: Principal): Caller {
    return { principal, meter: this.meter };
  }
}
