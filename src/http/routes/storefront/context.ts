/** What every storefront route reads off a request: its seller, its URLs, and who presents what. */
import type { FastifyRequest } from 'fastify';
import type { Storefront } from '../../../composition/storefront.js';
import { AGENT_AUTHORIZATION, presentedCredential, type Presented } from '../../../domain/storefront/credentials.js';
import type { Seller } from '../../../domain/storefront/sellers.js';
import { AppError } from '../../../domain/shared/errors.js';
import { headerOf } from '../../auth/strategy.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The storefront seller the request's host maps to (storefront routes only). */
    seller: Seller | null;
  }
}

export function sellerOf(request: FastifyRequest): Seller {
  if (!request.seller) throw new AppError('internal', 'storefront route without a seller');
  return request.seller;
}

/** The storefront's absolute URL as this request reached it. */
export const storefrontUrlOf = (request: FastifyRequest, prefix: string): string => `${request.protocol}://${request.host}${prefix}`;

/** The audience of the seller's access tokens. */
export const tokenAudience = (seller: Seller): string => `urn:sluice:storefront:${seller.id}`;

export interface Presenter {
  presented: Presented;
  /** The agent a verified token names, else null. */
  agentId: string | null;
}

/** Reads the credentials and verifies an agent token when one is presented. */
export async function presenterOf(request: FastifyRequest, storefront: Storefront): Promise<Presenter> {
  const presented = presentedCredential(headerOf(request, 'authorization'), headerOf(request, AGENT_AUTHORIZATION));
  const token = presented.kind === 'bearer' ? presented.token : presented.kind === 'payment' ? presented.bearer : null;
  const agentId = token === null ? null : await storefront.tokens.verify(token, tokenAudience(sellerOf(request)));
  return { presented, agentId };
}
