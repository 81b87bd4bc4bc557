/**
 * The MCP tool catalogue: which tools the endpoint offers, over which ready models, at
 * what price. A tool is offered while at least one model that serves its route is ready,
 * so `tools/list` follows the models as they become ready or go away. Prices are the
 * models' own token prices (the same the credit meter charges), quoted before any call so
 * an agent can decide before it pays.
 */
import type { TokenPrice } from '../shared/money.js';

export type McpToolName = 'chat' | 'embed' | 'moderate' | 'classify' | 'extract' | 'transcribe' | 'decide' | 'batch_create' | 'batch_get';

/** USD per million tokens, per model; or a flat USD amount per call. */
export type ToolPrice =
  | { unit: 'usd_per_million_tokens'; models: Readonly<Record<string, { input: number; output: number }>> }
  | { unit: 'usd_per_call'; amount: number };

export interface ToolOffer {
  name: McpToolName;
  /** The ready models the tool may be called with (empty for tools that take none). */
  models: readonly string[];
  /** Each model's task (`chat`, `classification`, `extraction`, …): a tool may call them differently. */
  tasks: ReadonlyMap<string, string>;
  price: ToolPrice;
}

/** What the catalogue reads of a model: its id, its task and the routes it answers on, its price. */
export interface OfferedModel {
  id: string;
  entry: { task: string; routes: readonly string[] };
  price: TokenPrice;
}

/** What the catalogue reads of the model registry. */
export interface ModelReadiness {
  list(): readonly OfferedModel[];
  status(model: OfferedModel): Promise<{ ready: boolean }>;
}

/** Whether a model serves `route`, and (when given) is a model of `task`. */
const serves =
  (route: string, ...tasks: string[]) =>
  (m: OfferedModel): boolean =>
    m.entry.routes.includes(route) && (tasks.length === 0 || tasks.includes(m.entry.task));

/**
 * The models each model-backed tool calls: chat models and the one-text-in models on
 * /v1/chat/completions; classification and extraction models (GLiNER, or a chat model
 * answering by a JSON schema); speech models; batch lines are chat completions.
 */
const TOOL_MODELS: ReadonlyArray<readonly [McpToolName, (m: OfferedModel) => boolean]> = [
  ['chat', serves('chat')],
  ['embed', serves('embeddings')],
  ['moderate', serves('moderations')],
  ['classify', serves('chat', 'classification')],
  ['extract', serves('chat', 'extraction', 'chat')],
  ['transcribe', serves('transcriptions')],
  ['decide', serves('systemone')],
  ['batch_create', serves('chat')],
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
  for (const [name, serving] of TOOL_MODELS) {
    const models = ready.filter(serving);
    if (models.length === 0) continue;
    const tasks = new Map(models.map((m) => [m.id, m.entry.task]));
    offers.push({ name, models: models.map((m) => m.id), tasks, price: tokenPrice(models) });
  }
  offers.push({ name: 'batch_get', models: [], tasks: new Map(), price: { unit: 'usd_per_call', amount: 0 } });
  return offers;
}
