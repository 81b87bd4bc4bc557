/**
 * The `models:` section of sluice.yaml → the served models. Every catalog id is served
 * with its catalog defaults; an entry for a catalog id overrides those defaults; any
 * other id is a model the operator declares, served by an upstream (OpenAI-compatible
 * unless `upstream.protocol` names another protocol) under the `kind` it names. Ids are checked before anything is keyed by them, and the
 * file's map is read only through a Map (a YAML key named like an Object.prototype
 * member must never find the member).
 */
import path from 'node:path';
import { CATALOG } from './catalog.js';
import {
  DEFAULT_UPSTREAM_PROTOCOL,
  RUNTIME_KINDS,
  type BackendKind,
  type CatalogEntry,
  type ModelRoute,
  type ModelTask,
  type RuntimeKind,
} from '../domain/models/model-spec.types.js';
import type { ConfigFile, ModelConfig, ModelFileConfig } from './schema.js';
import { checkRouting, protocolOf, resolveAffinity, resolveDeployments } from './routing-config.js';
import { PROVIDER_PRESETS } from './providers.js';
import { catalogPrice } from './price-catalog.js';
import type { TokenPrice } from '../domain/shared/money.js';
import type { Deployment } from '../domain/models/model-spec.types.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The output a request without a cap is assumed to produce, for its credit reservation. */
const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
const DEFAULT_UPSTREAM_TIMEOUT_MS = 600_000;
/** A declared model's input limit when it states none; the upstream refuses what it cannot take. */
export const DECLARED_CONTEXT_LENGTH = 131_072;

export const MODEL_ID_MAX_LENGTH = 128;
/** Letters, digits, `.`, `_`, `-`, `:` (Ollama tags); no `/`, which would leave `GET /v1/models/{id}` and the model directory. */
const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

export type DeclaredKind = 'chat' | 'embeddings' | 'moderation';

/** What a declared model's kind serves: its task and its routes (a chat model answers Responses through chat completions). */
const KINDS: ReadonlyMap<string, { task: ModelTask; routes: readonly ModelRoute[] }> = new Map([
  ['chat', { task: 'chat' as const, routes: ['chat', 'responses'] as const }],
  ['embeddings', { task: 'embeddings' as const, routes: ['embeddings'] as const }],
  ['moderation', { task: 'moderation' as const, routes: ['moderations'] as const }],
]);

const CATALOG_BY_LOWER_ID: ReadonlyMap<string, CatalogEntry> = new Map(CATALOG.map((e) => [e.id.toLowerCase(), e]));

/** Why `id` cannot name a model, or null when it can. */
export function modelIdProblem(id: string): string | null {
  if (id.length === 0 || id.length > MODEL_ID_MAX_LENGTH) return `a model id is 1 to ${MODEL_ID_MAX_LENGTH} characters (this one has ${id.length})`;
  if (!MODEL_ID_PATTERN.test(id)) return 'a model id starts with a letter or digit and has only letters, digits, ".", "_", "-" and ":"';
  if (id === 'prototype' || Object.prototype.hasOwnProperty.call(Object.prototype, id)) {
    return `"${id}" is the name of a JavaScript object member and cannot be a model id`;
  }
  return null;
}

/** A declared model's catalog-shaped entry, from its kind. */
function declaredEntry(id: string, kind: DeclaredKind, m: ModelFileConfig): CatalogEntry {
  const { task, routes } = KINDS.get(kind)!;
  return {
    id,
    task,
    routes,
    contextLength: m.context_length ?? DECLARED_CONTEXT_LENGTH,
    truncatesInput: false,
    inputPerMillionUsd: 0,
    outputPerMillionUsd: 0,
    defaultBackend: 'upstream',
    hubRepo: null,
  };
}

/** What serves the model: the runtime sluice.yaml names, else an upstream when it configures one, else the catalog's default. */
function backendOf(entry: CatalogEntry, m: ModelFileConfig): BackendKind {
  if (m.backend !== undefined) return isRuntime(m.backend) ? m.backend : 'upstream';
  return m.upstream || m.base_url || m.deployments ? 'upstream' : entry.defaultBackend;
}

const isRuntime = (backend: string): backend is RuntimeKind => (RUNTIME_KINDS as readonly string[]).includes(backend);

/** The model's upstream keys as one: its engines from `upstream.deployments`, `deployments`, `base_url` or `provider`. */
function upstreamOf(id: string, m: ModelFileConfig, problems: string[]): { engines: ModelFileConfig } {
  if (m.backend !== undefined && !isRuntime(m.backend) && m.upstream?.protocol !== undefined && m.upstream.protocol !== m.backend) {
    problems.push(`models.${id}.upstream.protocol: ${m.upstream.protocol}, but backend says ${m.backend}; give one of them`);
  }
  if (!m.upstream?.deployments) return { engines: m };
  if (m.deployments || m.base_url) problems.push(`models.${id}.upstream.deployments: give the engines once, under upstream or as the model's base_url or deployments`);
  return { engines: { ...m, base_url: undefined, deployments: m.upstream.deployments } };
}

/**
 * The model's price and input limit. A hosted model (a deployment with a `provider`, or a
 * protocol only hosted services speak: bedrock) is
 * priced from the catalog (price-catalog.ts) under its upstream name, sluice.yaml's
 * `price` overriding it key by key; one the catalog lacks must be priced in sluice.yaml,
 * and is refused at start-up otherwise: a hosted model never serves at price 0.
 */
function pricingOf(id: string, entry: CatalogEntry, m: ModelFileConfig, protocol: string, deployments: readonly Deployment[], problems: string[]) {
  const hosted = deployments.find((d) => d.provider !== undefined) ?? (HOSTED_PROTOCOLS.has(protocol) ? deployments[0] : undefined);
  const providerName = hosted?.provider ?? protocol;
  const priceProvider = hosted?.provider === undefined ? HOSTED_PROTOCOLS.get(protocol) : PROVIDER_PRESETS.get(hosted.provider)?.priceProvider;
  const name = hosted?.upstreamModel ?? id;
  const found = hosted && priceProvider ? catalogPrice(priceProvider, name) : null;
  const base: TokenPrice = found?.price ?? { inputPerMillionUsd: entry.inputPerMillionUsd, outputPerMillionUsd: entry.outputPerMillionUsd };
  const given = m.price ?? {};
  if (hosted && !found && (given.input_per_million_usd === undefined || given.output_per_million_usd === undefined)) {
    problems.push(
      `models.${id}.price: ${name} on provider ${providerName} is not in the price catalog; set price.input_per_million_usd and price.output_per_million_usd (a hosted model never serves at price 0)`,
    );
  }
  const price: TokenPrice = {
    inputPerMillionUsd: given.input_per_million_usd ?? base.inputPerMillionUsd,
    outputPerMillionUsd: given.output_per_million_usd ?? base.outputPerMillionUsd,
  };
  const cachedInput = given.cached_input_per_million_usd ?? base.cachedInputPerMillionUsd;
  const cacheWrite = given.cache_write_per_million_usd ?? base.cacheWritePerMillionUsd;
  if (cachedInput !== undefined) price.cachedInputPerMillionUsd = cachedInput;
  if (cacheWrite !== undefined) price.cacheWritePerMillionUsd = cacheWrite;
  return { price, contextLength: m.context_length ?? found?.contextWindow ?? entry.contextLength };
}

/** Protocols only hosted services speak, with their provider id in the price catalog. */
const HOSTED_PROTOCOLS: ReadonlyMap<string, string> = new Map([['bedrock', 'aws']]);

/** Protocols whose deployments are named by a cloud region (the endpoint follows from it). */
const REGIONAL_PROTOCOLS = new Set(['bedrock']);

/** A bedrock deployment names its region; no other protocol's does. */
function checkRegions(id: string, protocol: string, engines: ModelFileConfig, problems: string[]): void {
  const regional = REGIONAL_PROTOCOLS.has(protocol);
  if (regional && engines.base_url && !engines.deployments) {
    problems.push(`models.${id}.base_url: a ${protocol} model lists its deployments under upstream.deployments, each with its region`);
  }
  (engines.deployments ?? []).forEach((d, i) => {
    if (regional && !d.region) problems.push(`models.${id}.upstream.deployments[${i}].region: required by the ${protocol} protocol (e.g. us-east-1)`);
    if (!regional && d.region) problems.push(`models.${id}.deployments[${i}].region: only a regional protocol (bedrock) has regions; ${protocol} engines are named by base_url`);
  });
}

function resolveOne(id: string, entry: CatalogEntry, m: ModelFileConfig, env: Env, dirs: { models: string; cwd: string }, problems: string[]): ModelConfig {
  const backend = backendOf(entry, m);
  const { engines } = upstreamOf(id, m, problems);
  const hasEngine = Boolean(engines.base_url ?? engines.provider ?? engines.deployments?.[0]);
  if (backend === 'upstream') checkRegions(id, m.upstream?.protocol ?? DEFAULT_UPSTREAM_PROTOCOL, engines, problems);
  // A catalog upstream model without an engine is merely not ready; one the file binds or declares needs it.
  if (backend === 'upstream' && !hasEngine && (m.backend !== undefined || m.kind !== undefined || m.upstream)) {
    problems.push(`models.${id}.base_url: required when backend is ${m.backend ?? m.upstream?.protocol ?? DEFAULT_UPSTREAM_PROTOCOL}`);
  }
  if (backend !== 'upstream' && (m.deployments || m.upstream)) {
    problems.push(`models.${id}.${m.upstream ? 'upstream' : 'deployments'}: only a model served by an upstream has deployments; ${backend} runs in-process`);
  }
  const timeoutMs = m.timeout_ms ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const deployments = backend === 'upstream' ? resolveDeployments(id, engines, timeoutMs, env, problems, dirs.cwd) : [];
  const protocol = protocolOf(id, m.upstream?.protocol, deployments, problems);
  const { price, contextLength } = pricingOf(id, entry, m, protocol, deployments, problems);
  return Object.freeze({
    id,
    entry,
    contextLength,
    maxOutputTokens: m.max_output_tokens ?? Math.min(contextLength, DEFAULT_MAX_OUTPUT_TOKENS),
    price,
    binding: {
      backend,
      upstream: backend === 'upstream' ? { protocol, deployments } : null,
      baseUrl: deployments[0]?.baseUrl ?? null,
      upstreamModel: m.upstream_model ?? deployments[0]?.upstreamModel ?? null,
      apiKey: deployments[0]?.apiKey ?? null,
      timeoutMs,
      dropParams: Array.isArray(m.drop_params) ? m.drop_params : [],
      dropUnsupported: m.drop_params === true,
      path: path.resolve(dirs.models, m.path ?? id),
      deployments,
    },
    aliases: m.aliases ?? [],
    declared: m.kind !== undefined || !CATALOG_BY_LOWER_ID.has(id.toLowerCase()),
    fallbacks: m.fallbacks ?? [],
    contextWindowFallbacks: m.context_window_fallbacks ?? [],
    ...(m.affinity === undefined ? {} : { affinity: resolveAffinity(m.affinity) }),
  });
}

/** A declaration outside the catalog: an upstream with a base_url (or deployments), under a valid id. */
function checkDeclared(id: string, m: ModelFileConfig, problems: string[]): boolean {
  const idProblem = modelIdProblem(id);
  if (idProblem) {
    problems.push(`models.${JSON.stringify(id)}: ${idProblem}`);
    return false;
  }
  if (m.backend !== undefined && isRuntime(m.backend)) {
    problems.push(
      `models.${id}.backend: a model id outside the catalog is served by an upstream (backend: ${DEFAULT_UPSTREAM_PROTOCOL}); the in-process ${m.backend} runtime serves catalog ids only`,
    );
    return false;
  }
  if (!m.base_url && !m.provider && !m.deployments && !m.upstream?.deployments) {
    problems.push(`models.${id}.base_url: required: the OpenAI-compatible server that serves ${id} (e.g. http://127.0.0.1:11434/v1 for Ollama)`);
    return false;
  }
  return true;
}

function engineCount(m: ModelFileConfig): string {
  const listed = m.deployments ?? m.upstream?.deployments;
  return listed ? `${listed.length} deployments` : 'no upstream';
}

export interface ResolvedModels {
  models: Record<string, ModelConfig>;
  /** Start-up log lines: catalog entries that sluice.yaml overrides or replaces. */
  notices: string[];
}

/** Catalog models (in catalog order), then declared ones (in file order). */
export function resolveModels(file: ConfigFile, env: Env, modelsDir: string, problems: string[], cwd: string = process.cwd()): ResolvedModels {
  const dirs = { models: modelsDir, cwd };
  const configured = new Map<string, ModelFileConfig>(Object.entries(file.models ?? {}));
  const notices: string[] = [];
  const seen = new Map<string, string>();
  for (const id of configured.keys()) {
    const earlier = seen.get(id.toLowerCase());
    if (earlier !== undefined) problems.push(`models.${id}: the same model as models.${earlier} (ids match case-insensitively)`);
    seen.set(id.toLowerCase(), id);
  }
  // Null prototype: model ids come from requests, and `constructor` must not find Object's.
  const models: Record<string, ModelConfig> = Object.create(null) as Record<string, ModelConfig>;
  for (const catalogEntry of CATALOG) {
    const yamlId = seen.get(catalogEntry.id.toLowerCase());
    const m = yamlId === undefined ? undefined : configured.get(yamlId);
    if (!m) {
      models[catalogEntry.id] = resolveOne(catalogEntry.id, catalogEntry, {}, env, dirs, problems);
      continue;
    }
    const entry = m.kind ? declaredEntry(catalogEntry.id, m.kind, m) : catalogEntry;
    if (m.kind && m.backend !== undefined && isRuntime(m.backend)) {
      problems.push(`models.${yamlId}.backend: a model declared with kind is served by an upstream (backend: ${DEFAULT_UPSTREAM_PROTOCOL})`);
    }
    models[catalogEntry.id] = resolveOne(catalogEntry.id, entry, m, env, dirs, problems);
    notices.push(
      m.kind
        ? `models.${yamlId} in sluice.yaml replaces the catalog model ${catalogEntry.id}: now kind ${m.kind}, served by ${m.base_url ?? engineCount(m)}`
        : `models.${yamlId} in sluice.yaml overrides the catalog defaults of ${catalogEntry.id} (${Object.keys(m).join(', ') || 'nothing set'})`,
    );
  }
  for (const [id, m] of configured) {
    if (CATALOG_BY_LOWER_ID.has(id.toLowerCase()) || seen.get(id.toLowerCase()) !== id) continue;
    if (!checkDeclared(id, m, problems)) continue;
    models[id] = resolveOne(id, declaredEntry(id, m.kind ?? 'chat', m), m, env, dirs, problems);
  }
  const byId = new Map(Object.values(models).map((model) => [model.id, { ...model, task: model.entry.task, deployments: model.binding.deployments }]));
  checkRouting(byId, problems);
  return { models, notices };
}
