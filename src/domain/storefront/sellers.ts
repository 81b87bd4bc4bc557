/** Sellers and their plans, looked up by the request's host (only through Maps). */
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
