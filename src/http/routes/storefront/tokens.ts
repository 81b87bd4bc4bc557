/** POST /oauth2/token: the RFC 7523 JWT-bearer grant, form-encoded (RFC 6749 §4.1.3 style). */
import type { FastifyInstance } from 'fastify';
import type { AgentTokenService } from '../../../domain/storefront/agent-tokens.port.js';
import { sellerOf, storefrontUrlOf, tokenAudience } from '../../auth/storefront-context.js';

export interface TokenRouteDeps {
  /** The storefront's prefix. */
  prefix: string;
  tokens: AgentTokenService;
}

export function registerTokenRoute(scope: FastifyInstance, { prefix, tokens }: TokenRouteDeps): void {
  scope.post('/oauth2/token', { schema: { hide: true } }, async (request, reply) => {
    const form = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const tokenUrl = `${storefrontUrlOf(request, prefix)}/oauth2/token`;
    const token = await tokens.exchange(form, tokenUrl, tokenAudience(sellerOf(request)));
    return reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(token);
  });
}
