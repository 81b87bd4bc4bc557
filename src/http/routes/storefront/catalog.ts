/** GET /manifest.json (the catalog) and GET /agent/entitlements (what the caller holds). */
import type { FastifyInstance } from 'fastify';
import { formatUsd } from '../../../domain/storefront/amounts.js';
import { bearerRequired } from '../../../domain/storefront/credentials.js';
import { JWT_BEARER } from '../../../domain/storefront/agent-tokens.port.js';
import type { StorefrontAccounts } from '../../../domain/storefront/accounts.js';
import type { PurchaseService } from '../../../domain/storefront/purchases.js';
import type { CreditAccount } from '../../../domain/storefront/storefront.types.js';
import { credentialOf, sellerOf, storefrontUrlOf } from '../../auth/storefront-context.js';

/** Chat models and their prices per million tokens, as the manifest lists them. */
export type ModelPrices = Readonly<Record<string, { inputPer1M: string; outputPer1M: string }>>;

export interface CatalogRouteDeps {
  /** The storefront's prefix. */
  prefix: string;
  anonymousLimitMicros: number;
  prices: ModelPrices;
  purchases: Pick<PurchaseService, 'availableRails'>;
  accounts: StorefrontAccounts;
}

const entitlement = (planId: string, account: CreditAccount) => ({
  planId,
  kind: 'credits',
  remainingCreditUsd: formatUsd(account.balanceMicros),
  purchasedCreditUsd: formatUsd(account.purchasedMicros),
  updatedAt: new Date(account.updatedAtMs).toISOString(),
});

export function registerCatalogRoutes(scope: FastifyInstance, deps: CatalogRouteDeps): void {
  const { prefix, prices } = deps;

  scope.get('/manifest.json', { schema: { hide: true } }, async (request) => {
    const seller = sellerOf(request);
    const base = storefrontUrlOf(request, prefix);
    const rails = await deps.purchases.availableRails();
    return {
      seller: { id: seller.id, name: seller.name },
      plans: [...seller.plans.values()].map((plan) => ({
        id: plan.id,
        kind: plan.kind,
        description: plan.description,
        prices,
        purchase: {
          url: `${base}/plans/${plan.id}/purchase`,
          method: 'POST',
          minimumUsd: formatUsd(plan.minimumMicros),
          cardMinimumUsd: '0.50',
          anonymousLimitUsd: formatUsd(deps.anonymousLimitMicros),
          rails,
        },
      })),
      extend: { url: `${base}/extend`, method: 'POST' },
      entitlements: { url: `${base}/agent/entitlements`, method: 'GET' },
      chat: { url: `${base}/gateway/v1/chat/completions`, method: 'POST' },
      auth: { tokenUrl: `${base}/oauth2/token`, grantTypes: [JWT_BEARER] },
    };
  });

  scope.get('/agent/entitlements', { schema: { hide: true } }, async (request) => {
    const seller = sellerOf(request);
    const { receiptId, agentId } = credentialOf(request);
    const planId = [...seller.plans.keys()][0]!;
    if (receiptId !== null) {
      const account = await deps.accounts.ofReceipt(seller.id, receiptId);
      return { object: 'list', receipt: true, data: [entitlement(planId, account)] };
    }
    if (agentId === null) throw bearerRequired('Listing entitlements needs your agent token', `${storefrontUrlOf(request, prefix)}/oauth2/token`);
    const accounts = await deps.accounts.ofAgent(seller.id, agentId);
    return { object: 'list', agent: { id: agentId }, data: accounts.map((a) => entitlement(planId, a)) };
  });
}
