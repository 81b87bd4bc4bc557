/**
 * A strategy that lets a request with no credential at all through with no caller yet
 * (`null`), and hands any request that presents one to the strategy it wraps, which
 * admits or refuses it as it would anywhere (a bad key is still refused). For scopes that
 * answer some requests anonymously (MCP discovery) and refuse the rest themselves.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../domain/identity/caller.js';
import { headerOf, type AuthStrategy } from './strategy.js';

export class OptionalCredentialStrategy implements AuthStrategy {
  readonly needs: AuthStrategy['needs'];

  constructor(
    private readonly inner: AuthStrategy,
    /** The headers that carry a credential for `inner`. */
    private readonly credentialHeaders: readonly string[],
  ) {
    this.needs = inner.needs;
  }

  authenticate(request: FastifyRequest): Caller | null | Promise<Caller | null> {
    for (const name of this.credentialHeaders) if (headerOf(request, name) !== undefined) return this.inner.authenticate(request);
    return null;
  }
}
