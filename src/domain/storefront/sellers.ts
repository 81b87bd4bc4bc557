/** Sellers and their plans, looked up by the request's host (only through Maps). */
import { createHash } from 'node:crypto';
/** A plan of a seller's catalog (Credits: prepaid, drawn by calls). */
export interface Plan {
  id: string;
  kind: 'credits';
  description: string;
  minimumMicros: number;
}

export interface Seller {
  id: string;
  name: string;
  plans: ReadonlyMap<string, Plan>;
}

/** Namespace of the storefront tenant projects' name-based ids. */
const TENANT_NAMESPACE = Buffer.from('6f1c2f4e9a3b4c1d8e7f0a1b2c3d4e5f', 'hex');

/**
 * The tenant project of a seller's storefront calls: their usage records are its usage
 * (it owns no files or batches, and no credit). Project ids are UUIDs; this one is the
 * seller id's name-based UUID (RFC 9562 version 5, written here because node:crypto
 * only makes random ones), so every replica derives it without a lookup.
 */
export function storefrontProjectId(sellerId: string): string {
  const hash = createHash('sha1').update(TENANT_NAMESPACE).update(`storefront:${sellerId}`).digest().subarray(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface SellerSettings {
  seller: { id: string; name: string; hosts: readonly string[] };
  plans: readonly Plan[];
}

export class SellerDirectory {
  readonly #byHost = new Map<string, Seller>();
  /** The seller every host maps to: one seller configured with no host list. */
  readonly #fallback: Seller | null;
  readonly sellers: readonly Seller[];

  constructor(config: SellerSettings) {
    const seller: Seller = { id: config.seller.id, name: config.seller.name, plans: new Map(config.plans.map((p) => [p.id, p])) };
    this.sellers = [seller];
    for (const host of config.seller.hosts) this.#byHost.set(host, seller);
    this.#fallback = config.seller.hosts.length === 0 ? seller : null;
  }

  /** The seller of `host` (a Host header, port and case ignored), or null. */
  forHost(host: string | undefined): Seller | null {
    if (this.#fallback) return this.#fallback;
    if (!host) return null;
    const name = host.toLowerCase().replace(/:\d+$/, '');
    return this.#byHost.get(name) ?? null;
  }
}
