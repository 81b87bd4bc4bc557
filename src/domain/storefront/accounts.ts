/**
 * What storefront callers hold and the checkouts a seller started, as the storefront's
 * routes read them (entitlements, extend, a checkout's status): the routes ask this
 * service, never the store.
 */
import { invalidReceipt } from '../shared/storefront-errors.js';
import type { CheckoutRecord, CreditAccount, StorefrontStore } from './storefront.types.js';

export class StorefrontAccounts {
  constructor(private readonly store: Pick<StorefrontStore, 'account' | 'accountsOfAgent' | 'checkout'>) {}

  /** The active account of a receipt (`receiptId` hashed, as stored); invalid_receipt otherwise. */
  async ofReceipt(sellerId: string, receiptId: string): Promise<CreditAccount> {
    const account = await this.store.account(sellerId, { kind: 'receipt', receiptId });
    if (!account || account.status !== 'active') throw invalidReceipt();
    return account;
  }

  ofAgent(sellerId: string, agentId: string): Promise<CreditAccount[]> {
    return this.store.accountsOfAgent(sellerId, agentId);
  }

  /** The seller's checkout with this id; undefined when there is none, or it is another seller's. */
  async checkout(sellerId: string, id: string): Promise<CheckoutRecord | undefined> {
    const checkout = await this.store.checkout(id);
    return checkout?.sellerId === sellerId ? checkout : undefined;
  }
}
