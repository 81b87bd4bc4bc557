/**
 * What an operator reads of the storefront (the admin API, the console's Storefront page):
 * its purchases, which are the ledger's `purchase` movements, and its credit accounts,
 * an agent's or a receipt's (a receipt by the SHA-256 of its id, all that is stored).
 * Read only, newest first, a page at a time.
 */
import type { CreditAccount, Rail } from './storefront.types.js';
import type { AccountPosition } from './activity-store.port.js';

export const RAILS: readonly Rail[] = ['x402', 'mpp', 'card'];
export const HOLDER_KINDS: readonly ('agent' | 'receipt')[] = ['agent', 'receipt'];

const holderIdOf = (account: CreditAccount): string => (account.holder.kind === 'agent' ? account.holder.agentId : account.holder.receiptId);

/** An account's position as an opaque string: base64url of a JSON array. */
export function accountCursor(account: CreditAccount): string {
  const position = [account.createdAtMs, account.sellerId, account.holder.kind, holderIdOf(account)];
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/** The position an accountCursor() string names, or null when it names none. */
export function readAccountCursor(cursor: string): AccountPosition | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return null;
  const [createdAtMs, sellerId, holderKind, holderId] = parsed as unknown[];
  if (!Number.isSafeInteger(createdAtMs) || typeof sellerId !== 'string' || typeof holderKind !== 'string' || typeof holderId !== 'string') return null;
  return { createdAtMs: createdAtMs as number, sellerId, holderKind, holderId };
}
