/** The admin API's storefront routes: purchases and credit accounts (agents' and receipts'), read only. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { accountCursor, HOLDER_KINDS, RAILS, readAccountCursor } from '../../../domain/storefront/activity.js';
import type { StorefrontActivityStore } from '../../../domain/storefront/activity-store.port.js';
import { holderKey, type CreditAccount, type CreditMovement } from '../../../domain/storefront/storefront.types.js';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { microsToUsd } from '../../../domain/shared/money.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { readChoice } from '../../mappers/files-batches.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { StorefrontAccountList, StorefrontAccountQuery, StorefrontPurchaseList, StorefrontPurchaseQuery } from '../../schemas/admin.js';

export const purchaseToWire = (m: CreditMovement) => ({
  id: m.id,
  object: 'storefront_purchase' as const,
  seller_id: m.sellerId,
  holder: holderKey(m.holder),
  rail: m.rail,
  amount_usd: microsToUsd(m.amountMicros),
  payment_ref: m.paymentRef,
  detail: m.detail,
  created_at: toUnixSeconds(m.createdAtMs),
});

export const accountToWire = (a: CreditAccount & { id: string }) => ({
  id: a.id,
  object: 'storefront_account' as const,
  seller_id: a.sellerId,
  holder: holderKey(a.holder),
  balance_usd: microsToUsd(a.balanceMicros),
  purchased_usd: microsToUsd(a.purchasedMicros),
  consumed_usd: microsToUsd(a.consumedMicros),
  status: a.status,
  created_at: toUnixSeconds(a.createdAtMs),
  updated_at: toUnixSeconds(a.updatedAtMs),
});

const tags = ['admin'];

export function registerStorefrontAdmin(plain: FastifyInstance, { activity: store }: { activity: StorefrontActivityStore }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

  const purchasesSchema = { tags, querystring: StorefrontPurchaseQuery, response: { 200: StorefrontPurchaseList } };
  scope.get('/storefront/purchases', { schema: purchasesSchema, ...serializeAsBefore }, async (request) => {
    const { rail, limit, after } = request.query;
    const filter = { rail: readChoice(rail, RAILS, 'rail', 'invalid_rail') };
    return toListPage(await store.purchases(filter, readLimit(limit, 100, 20), after), purchaseToWire);
  });

  const accountsSchema = { tags, querystring: StorefrontAccountQuery, response: { 200: StorefrontAccountList } };
  scope.get('/storefront/accounts', { schema: accountsSchema, ...serializeAsBefore }, async (request) => {
    const { holder_kind: holderKind, limit, after } = request.query;
    const filter = { holderKind: readChoice(holderKind, HOLDER_KINDS, 'holder_kind', 'invalid_holder_kind') };
    const position = after === undefined ? undefined : readAccountCursor(after);
    if (position === null) throw invalidRequest('after must be the id of an account of this list', 'after', 'invalid_cursor');
    const page = await store.accounts(filter, readLimit(limit, 100, 20), position);
    const items = page.items.map((account) => ({ ...account, id: accountCursor(account) }));
    return toListPage({ items, hasMore: page.hasMore }, accountToWire);
  });
}
