/**
 * The MCP tool catalogue: which tools the endpoint offers, over which ready models, at
 * what price. A tool is offered while at least one model that serves its route is ready,
 * so `tools/list` follows the models as they become ready or go away. Prices are the
 * models' own token prices (the same the credit meter charges), quoted before any call so
 * an agent can decide before it pays.
 */
import type { TokenPrice } from '../shared/money.js';

export type McpToolName = 'chat' | 'embed' | 'moderate' | 'decide' | 'batch_create' | 'batch_get';

/** USD per million tokens, per model; or a flat USD amount per call. */
export type ToolPrice =
  | { unit: 'usd_per_million_tokens'; models: Readonly<Record<string, { input: number; output: number }>> }
  | { unit: 'usd_per_call'; amount: number };

export interface ToolOffer {
  name: McpToolName;
  /** The ready models the tool may be called with (empty for tools that take none). */
  models: readonly string[];
  price: ToolPrice;
}

/** What the catalogue reads of a model: its id, the routes it answers on, its price. */
export interface OfferedModel {
  id: string;
  entry: { routes: readonly string[] };
  price: TokenPrice;
}

/** What the catalogue reads of the model registry. */
export interface ModelReadiness {
  list(): readonly OfferedModel[];
  status(model: OfferedModel): Promise<{ ready: boolean }>;
}

/** The model route each model-backed tool serves; batch lines are chat completions. */
const TOOL_ROUTES: ReadonlyArray<readonly [McpToolName, string]> = [
  ['chat', 'chat'],
  ['embed', 'embeddings'],
  ['moderate', 'moderations'],
  ['decide', 'systemone'],
  ['batch_create', 'chat'],
];

/** The `route` of a tool call's usage record. */
export const mcpUsageRoute = (tool: McpToolName): string => `mcp/${tool}`;

const tokenPrice = (models: readonly OfferedModel[]): ToolPrice => ({
  unit: 'usd_per_million_tokens',
  models: Object.fromEntries(models.map((m) => [m.id, { input: m.price.inputPerMillionUsd, output: m.price.outputPerMillionUsd }])),
});

/** How long a computed list is reused: readiness itself is cached for seconds by the registry. */
const LIST_TTL_MS = 1_000;

export class McpToolCatalogue {
  #cached: { offers: readonly ToolOffer[]; signature: string; expiresAtMs: number } | null = null;

  constructor(
    private readonly models: ModelReadiness,
    /** Called when the offered tools change (a model became ready or went away). */
    private readonly onChange: () => void = () => {},
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** The tools offered now; the same array while nothing changed. */
  async offers(): Promise<readonly ToolOffer[]> {
    const cached = this.#cached;
    if (cached && cached.expiresAtMs > this.nowMs()) return cached.offers;
    const all = this.models.list();
    const readiness = await Promise.all(all.map((m) => this.models.status(m).then((s) => s.ready, () => false)));
    const ready = all.filter((_, i) => readiness[i]);
    const signature = ready.map((m) => m.id).join(',');
    if (cached && cached.signature === signature) {
      this.#cached = { ...cached, expiresAtMs: this.nowMs() + LIST_TTL_MS };
      return cached.offers;
    }
    const offers = offersOf(ready);
    this.#cached = { offers, signature, expiresAtMs: this.nowMs() + LIST_TTL_MS };
    if (cached) this.onChange();
    return offers;
  }
}

/** The tools the ready models make possible, in a stable order. */
export function offersOf(ready: readonly OfferedModel[]): ToolOffer[] {
  const offers: ToolOffer[] = [];
  for (const [name, route] of TOOL_ROUTES) {
    const models = ready.filter((m) => m.entry.routes.includes(route));
    if (models.length > 0) offers.push({ name, models: models.map((m) => m.id), price: tokenPrice(models) });
  }
  offers.push({ name: 'batch_get', models: [], price: { unit: 'usd_per_call', amount: 0 } });
  return offers;
}
