/**
 * The storefront's records and the store port its repository implements. Money is in
 * integer micro-dollars; one ledger of credit movements is the source of every balance.
 */

import type { Payer } from '../identity/payer.types.js';

/**
 * Who holds storefront credit: an agent, or a receipt, whose `receiptId` here is the
 * SHA-256 of the id the buyer holds (the stored, non-secret name of the receipt).
 */
export type CreditHolder = Extract<Payer, { kind: 'agent' | 'receipt' }>;

export type MovementKind = 'purchase' | 'draw' | 'refund' | 'clawback';
export type Rail = 'x402' | 'mpp' | 'card';

/** One movement of credit; `amountMicros` is positive for a purchase, negative otherwise. */
export interface CreditMovement {
  id: string;
  sellerId: string;
  holder: CreditHolder;
  kind: MovementKind;
  amountMicros: number;
  /** Unique across the ledger: a payment credits once. Null for draws. */
  paymentRef: string | null;
  rail: Rail | null;
  /** The chat call of a draw, the settlement transaction of a purchase. */
  detail: string | null;
  createdAtMs: number;
}

export interface CreditAccount {
  sellerId: string;
  holder: CreditHolder;
  balanceMicros: number;
  purchasedMicros: number;
  consumedMicros: number;
  status: 'active' | 'revoked';
  createdAtMs: number;
  updatedAtMs: number;
}

/** A hosted card checkout started for an agent's purchase. */
export interface CheckoutRecord {
  id: string;
  sellerId: string;
  agentId: string;
  planId: string;
  amountMicros: number;
  provider: string;
  createdAtMs: number;
}

export type PurchaseOutcome = { credited: true; account: CreditAccount } | { credited: false; reason: 'payment_consumed' };

export interface StorefrontStore {
  account(sellerId: string, holder: CreditHolder): Promise<CreditAccount | undefined>;
  /** The account without waiting, or null when the store cannot answer synchronously now. */
  accountNow?(sellerId: string, holder: CreditHolder): { account: CreditAccount | undefined } | null;
  accountsOfAgent(sellerId: string, agentId: string): Promise<CreditAccount[]>;
  paymentRecorded(paymentRef: string): Promise<boolean>;
  /**
   * Records the purchase movement (its payment reference unique) and credits the holder,
   * creating the account, in one transaction; a reference already recorded credits nothing.
   */
  purchase(movement: CreditMovement): Promise<PurchaseOutcome>;
  /** Debits a draw in one transaction with its movement; the balance after. */
  draw(movement: CreditMovement): Promise<number>;
  /** A refund or clawback: debits at most the balance (clamped at zero), once per reference. */
  reverse(movement: CreditMovement): Promise<PurchaseOutcome>;
  movements(sellerId: string, holder: CreditHolder): Promise<CreditMovement[]>;
  /** Recomputes every account from the ledger; returns the accounts whose stored totals differed. */
  rebuildBalances(): Promise<number>;
  insertCheckout(checkout: CheckoutRecord): Promise<void>;
  checkout(id: string): Promise<CheckoutRecord | undefined>;
}

export const holderOf = (kind: string, id: string): CreditHolder =>
  kind === 'agent' ? { kind: 'agent', agentId: id } : { kind: 'receipt', receiptId: id };

export const holderKey = (holder: CreditHolder): { kind: 'agent' | 'receipt'; id: string } =>
  holder.kind === 'agent' ? { kind: 'agent', id: holder.agentId } : { kind: 'receipt', id: holder.receiptId };
