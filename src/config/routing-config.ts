/**
 * Routing across engines: the `routing:` section of sluice.yaml and a model's
 * `deployments`, `fallbacks` and `context_window_fallbacks`. A model's `base_url` is
 * shorthand for one deployment. Every knob has a default; a bad value is refused at
 * start-up with its path.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DEFAULT_UPSTREAM_PROTOCOL, type AffinityKeyKind, type AffinitySettings, type Deployment } from '../domain/models/model-spec.types.js';
import { PROVIDER_NAMES, PROVIDER_PRESETS, resolveKey } from './providers.js';

const PositiveInt = (description: string) => Type.Integer({ minimum: 1, description });

/** The keys that say which provider an engine is and how to reach it, on a model (its one engine) or a deployment. */
export const ProviderFileFields = {
  provider: Type.Optional(
    Type.Union(
      PROVIDER_NAMES.map((name) => Type.Literal(name)),
      { description: 'a hosted provider: sets the protocol, the base URL and the auth header' },
    ),
  ),
  api_key_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'environment variable holding the key' })),
  api_key_file: Type.Optional(Type.String({ minLength: 1, description: 'file holding the key (its first line)' })),
  auth: Type.Optional(
    Type.Union([Type.Literal('key'), Type.Literal('bearer')], {
      description: "how the key is sent: the protocol's key header (default), or Authorization: Bearer (an Azure Entra token)",
    }),
  ),
  api_version: Type.Optional(Type.String({ minLength: 1, description: "Azure's classic deployment form: the api-version query (absent: the v1 API)" })),
  anthropic_beta: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z0-9-]+$' }), { maxItems: 16, description: 'anthropic-beta flags sent on every call' })),
};

export const DeploymentFileSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$', description: 'operator-facing name of the deployment (default <model>#<n>)' }),
    ),
    base_url: Type.Optional(
      Type.String({ pattern: '^https?://', description: "the engine's base URL (an OpenAI-compatible one ends in /v1; for bedrock, an endpoint override); a provider's own by default" }),
    ),
    region: Type.Optional(Type.String({ pattern: '^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$', description: 'AWS region of a bedrock deployment (e.g. us-east-1)' })),
    upstream_model: Type.Optional(Type.String({ minLength: 1 })),
    ...ProviderFileFields,
    weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'share of calls under the weighted strategy (default 1)' })),
    max_concurrency: Type.Optional(PositiveInt('calls in flight on this deployment from one replica; more wait briefly in a queue')),
    timeout_ms: Type.Optional(PositiveInt('upstream request timeout (default: the model timeout_ms)')),
  },
  { additionalProperties: false },
);

const DeploymentsFileSchema = Type.Array(DeploymentFileSchema, { minItems: 1, maxItems: 64, description: 'several engines serving the model' });

/** `upstream:` the protocol the model's engines speak, and the engines (or the model's `base_url`/`deployments`). */
export const UpstreamFileSchema = Type.Object(
  {
    protocol: Type.Optional(
      Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$', description: `a registered upstream protocol (default ${DEFAULT_UPSTREAM_PROTOCOL})` }),
    ),
    deployments: Type.Optional(DeploymentsFileSchema),
  },
  { additionalProperties: false },
);

const AffinityKeySchema = Type.Union(
  [Type.Literal('prompt_cache_key'), Type.Literal('session_header'), Type.Literal('previous_response'), Type.Literal('user'), Type.Literal('prefix')],
  { description: 'what keys a session: prompt_cache_key, session_header (X-Claude-Code-Session-Id), previous_response (the chain\'s root), user, prefix (the prompt\'s first prefix_chars characters)' },
);

/** `routing.affinity` and a model's `affinity`: which key pins a session to a deployment, and the load bound. */
export const AffinityFileSchema = Type.Object(
  {
    key: Type.Union([AffinityKeySchema, Type.Array(AffinityKeySchema, { minItems: 1, maxItems: 5 })], {
      description: 'a key, or keys in order of preference (the first the request carries)',
    }),
    prefix_chars: Type.Optional(Type.Integer({ minimum: 16, maximum: 1_000_000, description: 'characters of the prompt the prefix key hashes (default 2048)' })),
    load_factor: Type.Optional(
      Type.Number({ minimum: 1, maximum: 10, description: 'a deployment keeps its sessions while its calls in flight stay under this times its share (default 1.25)' }),
    ),
    ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 86_400, description: 'how long a pin lasts after the session\'s last turn (default 3600)' })),
  },
  { additionalProperties: false },
);

/** The model-level keys, merged into ModelFileSchema. */
export const ModelRoutingFileFields = {
  upstream: Type.Optional(UpstreamFileSchema),
  deployments: Type.Optional(DeploymentsFileSchema),
  fallbacks: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 8, description: 'models tried in order when every deployment failed' })),
  context_window_fallbacks: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), { maxItems: 8, description: 'models tried in order when the engine says the input is too long' }),
  ),
  affinity: Type.Optional(Type.Union([Type.Literal(false), AffinityFileSchema], { description: 'session affinity for this model (false: off); default routing.affinity' })),
};

export const RoutingFileSchema = Type.Object(
  {
    strategy: Type.Optional(Type.Union([Type.Literal('weighted'), Type.Literal('least_busy'), Type.Literal('latency')])),
    retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'further attempts of a call, each on a deployment not yet tried (default 2)' })),
    cooldown: Type.Optional(
      Type.Object(
        {
          failures: Type.Optional(PositiveInt('failures within window_seconds that take a deployment out (default 3)')),
          window_seconds: Type.Optional(PositiveInt('default 60')),
          seconds: Type.Optional(PositiveInt('how long a deployment stays out (default 30)')),
        },
        { additionalProperties: false },
      ),
    ),
    queue_timeout_ms: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 60_000, description: 'how long a call waits for a deployment at max_concurrency before 429 server_busy (default 2000)' }),
    ),
    redis_prefix: Type.Optional(Type.String({ minLength: 1, description: 'key prefix of the shared routing state in Redis (default sluice:routing)' })),
    affinity: Type.Optional(AffinityFileSchema),
  },
  { additionalProperties: false },
);

export type DeploymentFileConfig = Static<typeof DeploymentFileSchema>;
export type RoutingFileConfig = Static<typeof RoutingFileSchema>;
export type AffinityFileConfig = Static<typeof AffinityFileSchema>;

export type RoutingStrategy = 'weighted' | 'least_busy' | 'latency';

/** One engine serving a model. `id` is what operators see; the URL and key never leave the operator's side. */
export type { Deployment };

export interface RoutingConfig {
  strategy: RoutingStrategy;
  retries: number;
  cooldown: { failures: number; windowMs: number; durationMs: number };
  queueTimeoutMs: number;
  redisPrefix: string;
  /** Session affinity for every model that does not set its own; null: off. */
  affinity: AffinitySettings | null;
}

export const DEFAULT_ROUTING: RoutingConfig = Object.freeze({
  strategy: 'weighted',
  retries: 2,
  cooldown: Object.freeze({ failures: 3, windowMs: 60_000, durationMs: 30_000 }),
  queueTimeoutMs: 2_000,
  redisPrefix: 'sluice:routing',
  affinity: null,
});

export const DEFAULT_AFFINITY = Object.freeze({ prefixChars: 2048, loadFactor: 1.25, ttlMs: 3_600_000 });

/** A file's affinity setting, resolved: `false` is off. */
export function resolveAffinity(file: AffinityFileConfig | false | undefined): AffinitySettings | null {
  if (!file) return null;
  const keys: AffinityKeyKind[] = Array.isArray(file.key) ? [...new Set(file.key)] : [file.key];
  return Object.freeze({
    keys: Object.freeze(keys),
    prefixChars: file.prefix_chars ?? DEFAULT_AFFINITY.prefixChars,
    loadFactor: file.load_factor ?? DEFAULT_AFFINITY.loadFactor,
    ttlMs: (file.ttl_seconds ?? DEFAULT_AFFINITY.ttlMs / 1000) * 1000,
  });
}

export function resolveRouting(file: RoutingFileConfig | undefined): RoutingConfig {
  if (!file) return DEFAULT_ROUTING;
  return {
    strategy: file.strategy ?? DEFAULT_ROUTING.strategy,
    retries: file.retries ?? DEFAULT_ROUTING.retries,
    cooldown: {
      failures: file.cooldown?.failures ?? DEFAULT_ROUTING.cooldown.failures,
      windowMs: (file.cooldown?.window_seconds ?? DEFAULT_ROUTING.cooldown.windowMs / 1000) * 1000,
      durationMs: (file.cooldown?.seconds ?? DEFAULT_ROUTING.cooldown.durationMs / 1000) * 1000,
    },
    queueTimeoutMs: file.queue_timeout_ms ?? DEFAULT_ROUTING.queueTimeoutMs,
    redisPrefix: file.redis_prefix ?? DEFAULT_ROUTING.redisPrefix,
    affinity: resolveAffinity(file.affinity),
  };
}

type Env = Readonly<Record<string, string | undefined>>;

interface ModelRoutingInput {
  base_url?: string;
  upstream_model?: string;
  provider?: string;
  api_key_env?: string;
  api_key_file?: string;
  auth?: 'key' | 'bearer';
  api_version?: string;
  anthropic_beta?: string[];
  deployments?: DeploymentFileConfig[];
}

/**
 * A model's deployments: its `deployments` list, or the one its `base_url` names (the
 * shorthand). Deployment ids are unique across all models, since metrics, cooldowns
 * and usage records key on them.
 */
export function resolveDeployments(
  modelId: string,
  m: ModelRoutingInput,
  timeoutMs: number,
  env: Env,
  problems: string[],
  cwd: string = process.cwd(),
): Deployment[] {
  if (m.deployments && m.base_url) {
    problems.push(`models.${modelId}.deployments: give either base_url (one engine) or deployments, not both`);
    return [];
  }
  // The shorthand: the model's own keys name its one engine.
  const listed = m.deployments ?? (m.base_url || m.provider ? [m as DeploymentFileConfig] : []);
  return listed.map((d, i) => {
    const where = m.deployments ? `models.${modelId}.deployments[${i}]` : `models.${modelId}`;
    // A deployment inherits the model's provider and key unless it names its own.
    const provider = d.provider ?? m.provider;
    const preset = provider === undefined ? undefined : PROVIDER_PRESETS.get(provider);
    const baseUrl = d.base_url ?? preset?.baseUrl ?? (d.region ? awsRegionalEndpoint(d.region) : null);
    if (!baseUrl) problems.push(provider ? `${where}.base_url: required for provider ${provider} (its resource's URL)` : `${where}: give its base_url (or, for bedrock, its region)`);
    const keySource = d.api_key_env || d.api_key_file ? d : m;
    const apiKey = resolveKey(where, keySource, env, cwd, preset !== undefined || Boolean(keySource.api_key_env), problems);
    const deployment: Deployment = {
      id: d.id ?? (m.deployments ? `${modelId}#${i + 1}` : modelId),
      baseUrl: (baseUrl ?? '').replace(/\/+$/, ''),
      region: d.region ?? null,
      upstreamModel: d.upstream_model ?? m.upstream_model ?? null,
      apiKey,
      weight: d.weight ?? 1,
      maxConcurrency: d.max_concurrency ?? null,
      timeoutMs: d.timeout_ms ?? timeoutMs,
    };
    if (provider !== undefined) deployment.provider = provider;
    const auth = d.auth ?? m.auth;
    if (auth === 'bearer') deployment.auth = auth;
    const apiVersion = d.api_version ?? m.api_version;
    if (apiVersion !== undefined) deployment.apiVersion = apiVersion;
    const betas = d.anthropic_beta ?? m.anthropic_beta;
    if (betas !== undefined) deployment.betas = betas;
    return deployment;
  });
}

/** The protocol a model's engines speak: `upstream.protocol`, else its provider's, else OpenAI's; every deployment's provider must speak it. */
export function protocolOf(modelId: string, named: string | undefined, deployments: readonly Deployment[], problems: string[]): string {
  const byProvider = deployments.map((d) => (d.provider === undefined ? undefined : PROVIDER_PRESETS.get(d.provider)?.protocol));
  const protocol = named ?? byProvider.find((p) => p !== undefined) ?? DEFAULT_UPSTREAM_PROTOCOL;
  byProvider.forEach((p, i) => {
    if (p !== undefined && p !== protocol) {
      problems.push(`models.${modelId}: deployment ${deployments[i]!.id} is provider ${deployments[i]!.provider}, which speaks ${p}, but the model's engines speak ${protocol}`);
    }
  });
  // A key that only one protocol reads is refused elsewhere rather than ignored.
  for (const d of deployments) {
    if (d.apiVersion !== undefined && protocol !== 'azure') problems.push(`models.${modelId}: api_version (deployment ${d.id}) applies to the azure protocol only, not ${protocol}`);
    if (d.betas !== undefined && protocol !== 'anthropic') problems.push(`models.${modelId}: anthropic_beta (deployment ${d.id}) applies to the anthropic protocol only, not ${protocol}`);
  }
  return protocol;
}

/** Bedrock's runtime endpoint in a region: where a bedrock deployment without a base_url goes. */
export const awsRegionalEndpoint = (region: string): string => `https://bedrock-runtime.${region}.amazonaws.com`;

interface FallbackModel {
  id: string;
  task: string;
  fallbacks: readonly string[];
  contextWindowFallbacks: readonly string[];
  deployments: readonly Deployment[];
}

/** Fallbacks name known models of the same task, not the model itself; deployment ids are unique. */
export function checkRouting(models: ReadonlyMap<string, FallbackModel>, problems: string[]): void {
  const seen = new Map<string, string>();
  for (const model of models.values()) {
    for (const [key, list] of [['fallbacks', model.fallbacks], ['context_window_fallbacks', model.contextWindowFallbacks]] as const) {
      list.forEach((target, i) => {
        const other = models.get(target);
        const path = `models.${model.id}.${key}[${i}]`;
        if (!other) problems.push(`${path}: unknown model id ${target}`);
        else if (other.id === model.id) problems.push(`${path}: a model cannot fall back to itself`);
        else if (other.task !== model.task) problems.push(`${path}: ${target} is a ${other.task} model, ${model.id} a ${model.task} model`);
        else if (other.deployments.length === 0) problems.push(`${path}: ${target} has no upstream (base_url or deployments)`);
      });
    }
    for (const d of model.deployments) {
      const owner = seen.get(d.id);
      if (owner !== undefined) problems.push(`models.${model.id}.deployments: the deployment id ${d.id} is also used by models.${owner}`);
      seen.set(d.id, model.id);
    }
  }
}
