/** What every storefront route reads off a request: its seller, its URLs, and who presents what. */
import type { FastifyRequest } from 'fastify';
import type { Seller } from '../../domain/storefront/sellers.js';
import { AppError } from '../../domain/shared/errors.js';
import { callerOf } from './caller-auth.js';
import { refusalOf, STOREFRONT_VISITOR } from './storefront-strategy.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The storefront seller the request's host maps to (storefront routes only). */
    seller: Seller | null;
  }
}

/** The request property the storefront's tenant resolver fills (scopes/storefront.ts). */
export const SELLER_PROPERTY = 'seller';

export function sellerOf(request: FastifyRequest): Seller {
  if (!request.seller) throw new AppError('internal', 'storefront route without a seller');
  return request.seller;
}

/** The storefront's absolute URL as this request reached it. */
export const storefrontUrlOf = (request: FastifyRequest, prefix: string): string => `${request.protocol}://${request.host}${prefix}`;

/** The audience of the seller's access tokens. */
export const tokenAudience = (seller: Seller): string => `urn:sluice:storefront:${seller.id}`;

export interface PresentedCredential {
  /** The presented receipt, hashed as stored, else null. */
  receiptId: string | null;
  /** The agent a verified token names, else null. */
  agentId: string | null;
}

/**
 * The credential the storefront's strategy admitted: a receipt, an agent, or nothing. A
 * credential that was presented and failed is refused here, when a route reads it.
 */
export function credentialOf(request: FastifyRequest): PresentedCredential {
  const caller = callerOf(request);
  const { kind, payer } = caller.principal;
  if (kind === STOREFRONT_VISITOR) return { receiptId: null, agentId: null };
  const refusal = refusalOf(caller);
  if (refusal !== undefined) throw refusal;
  if (payer.kind === 'receipt') return { receiptId: payer.receiptId, agentId: null };
  return { receiptId: null, agentId: payer.kind === 'agent' ? payer.agentId : null };
}
