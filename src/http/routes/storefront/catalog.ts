/** GET /manifest.json (the catalog) and GET /agent/entitlements (what the caller holds). */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../../config/schema.js';
import type { Storefront } from '../../../composition/storefront.js';
import { formatUsd } from '../../../domain/storefront/amounts.js';
import { bearerRequired } from '../../../domain/storefront/credentials.js';
import { JWT_BEARER } from '../../../domain/storefront/agent-tokens.port.js';
import { receiptHash } from '../../../domain/storefront/receipts.js';
import { invalidReceipt } from '../../../domain/shared/storefront-errors.js';
import type { CreditAccount } from '../../../domain/storefront/storefront.types.js';
import { presenterOf, sellerOf, storefrontUrlOf } from './context.js';

/** Chat models with an upstream or in-process backend, and their prices per million tokens. */
function modelPrices(config: Readonly<Config>) {
  const prices: Record<string, { inputPer1M: string; outputPer1M: string }> = {};
  for (const model of Object.values(config.models)) {
    if (model.entry.task !== 'chat') continue;
    prices[model.id] = { inputPer1M: String(model.price.inputPerMillionUsd), outputPer1M: String(model.price.outputPerMillionUsd) };
  }
  return prices;
}

const entitlement = (planId: string, account: CreditAccount) => ({
  planId,
  kind: 'credits',
  remainingCreditUsd: formatUsd(account.balanceMicros),
  purchasedCreditUsd: formatUsd(account.purchasedMicros),
  updatedAt: new Date(account.updatedAtMs).toISOString(),
});

export function registerCatalogRoutes(scope: FastifyInstance, storefront: Storefront, config: Readonly<Config>): void {
  const prefix = storefront.config.prefix;
  const prices = modelPrices(config);

  scope.get('/manifest.json', { schema: { hide: true } }, async (request) => {
    const seller = sellerOf(request);
    const base = storefrontUrlOf(request, prefix);
    const rails = await storefront.purchases.availableRails();
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
          anonymousLimitUsd: formatUsd(storefront.config.anonymousLimitMicros),
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
    const { presented, agentId } = await presenterOf(request, storefront);
    const planId = [...seller.plans.keys()][0]!;
    if (presented.kind === 'receipt') {
      const account = await storefront.store.account(seller.id, { kind: 'receipt', receiptId: receiptHash(presented.receiptId) });
      if (!account || account.status !== 'active') throw invalidReceipt();
      return { object: 'list', receipt: true, data: [entitlement(planId, account)] };
    }
    if (agentId === null) throw bearerRequired('Listing entitlements needs your agent token', `${storefrontUrlOf(request, prefix)}/oauth2/token`);
    const accounts = await storefront.store.accountsOfAgent(seller.id, agentId);
    return { object: 'list', agent: { id: agentId }, data: accounts.map((a) => entitlement(planId, a)) };
  });
}
