/** POST /plans/{planId}/purchase and POST /extend: the 402 quote, or the paid retry's credit. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { StorefrontAccounts } from '../../../domain/storefront/accounts.js';
import type { PurchaseService } from '../../../domain/storefront/purchases.js';
import { bearerRequired } from '../../../domain/storefront/credentials.js';
import { storefrontError } from '../../../domain/shared/storefront-errors.js';
import type { PaymentAttempt } from '../../../domain/storefront/payment-rail.port.js';
import { headerOf } from '../../auth/strategy.js';
import { credentialOf, sellerOf, storefrontUrlOf } from '../../auth/storefront-context.js';

/** `amountUsd` is checked by the service, for the spec's codes (amount_required, …), not by the schema. */
const PurchaseBody = Type.Object(
  {
    amountUsd: Type.Optional(Type.Unknown()),
    checkout: Type.Optional(Type.Boolean()),
    paymentReference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: true },
);
type PurchaseBodyT = { amountUsd?: unknown; checkout?: boolean; paymentReference?: string };

const attemptOf = (request: FastifyRequest, body: PurchaseBodyT): PaymentAttempt => ({
  header: (name) => headerOf(request, name),
  paymentReference: body.paymentReference,
  method: request.method,
  body: null,
});

export interface PurchaseRouteDeps {
  /** The storefront's prefix. */
  prefix: string;
  purchases: PurchaseService;
  accounts: StorefrontAccounts;
}

export function registerPurchaseRoutes(scope: FastifyInstance, { prefix, purchases, accounts }: PurchaseRouteDeps): void {
  const buy = async (request: FastifyRequest, planId: string, extend: boolean) => {
    const credential = credentialOf(request);
    if (credential.receiptId !== null) {
      throw storefrontError('invalid_request', 'invalid_request', 'Receipts cannot be topped up; buy without a credential for a new receipt, or with an agent token for Credits');
    }
    const storefrontUrl = storefrontUrlOf(request, prefix);
    const seller = sellerOf(request);
    if (extend) {
      if (credential.agentId === null) throw bearerRequired('Extending Credits needs your agent token', `${storefrontUrl}/oauth2/token`);
      const held = await accounts.ofAgent(seller.id, credential.agentId);
      if (held.length === 0) {
        throw storefrontError('not_found', 'access_not_found', 'You hold no Credits to extend; check GET /agent/entitlements, then buy a plan', {
          plans: [...seller.plans.values()].map((p) => ({ id: p.id, purchase: { url: `${storefrontUrl}/plans/${p.id}/purchase`, method: 'POST' } })),
        });
      }
    }
    const body = (request.body ?? {}) as PurchaseBodyT;
    const result = await purchases.purchase({
      seller,
      planId,
      body,
      agentId: credential.agentId,
      resourceUrl: `${storefrontUrl}${request.url.split('?')[0]!.slice(prefix.length)}`,
      storefrontUrl,
      attempt: attemptOf(request, body),
    });
    return result;
  };

  scope.post<{ Params: { planId: string } }>(
    '/plans/:planId/purchase',
    { schema: { hide: true, body: PurchaseBody, params: Type.Object({ planId: Type.String({ maxLength: 64 }) }) } },
    async (request, reply) => {
      const result = await buy(request, request.params.planId, false);
      return reply.headers({ ...result.headers, 'cache-control': 'no-store' }).send(result.body);
    },
  );

  scope.post('/extend', { schema: { hide: true, body: PurchaseBody } }, async (request, reply) => {
    const plan = [...sellerOf(request).plans.values()][0]!;
    const result = await buy(request, plan.id, true);
    return reply.headers({ ...result.headers, 'cache-control': 'no-store' }).send({ access: result.body.access });
  });
}
