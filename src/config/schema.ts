/**
 * The configuration schema of the core's keys in the optional YAML file (`SLUICE_CONFIG`,
 * default `./sluice.yaml`), validated with TypeBox; each feature's key has its schema in
 * its own section (sections.ts), and the loader validates the file against both. The
 * resolved, typed `Config` the rest of the code receives is re-exported here (the core's
 * part in config.types.ts, the sections' in sections.ts). Only `src/config/` reads the
 * environment.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ModelRoutingFileFields, ProviderFileFields, RoutingFileSchema } from './routing-config.js';
import { NonNegative, PositiveInt } from './schema-kit.js';
import { DEFAULT_UPSTREAM_PROTOCOL, RUNTIME_KINDS } from '../domain/models/model-spec.types.js';

export type { Deployment, RoutingConfig, RoutingStrategy } from './routing-config.js';
export type { Config } from './sections.js';
export type { BatchConfig } from './batch-config.js';
export type { ResponsesConfig } from './responses-config.js';
export type { GatewayConfig } from './gateway-config.js';
export type { DecisionConfig } from './decision-config.js';
export type { ConsoleConfig } from './console-config.js';
export type { McpConfig } from './mcp-config.js';
export type { StorefrontConfig } from './storefront-config.js';

export const ModelFileSchema = Type.Object(
  {
    backend: Type.Optional(
      Type.Union([Type.Literal(DEFAULT_UPSTREAM_PROTOCOL), ...RUNTIME_KINDS.map((kind) => Type.Literal(kind))], {
        description: `an in-process runtime, or ${DEFAULT_UPSTREAM_PROTOCOL}: an upstream speaking that protocol (as upstream.protocol)`,
      }),
    ),
    kind: Type.Optional(
      Type.Union([Type.Literal('chat'), Type.Literal('embeddings'), Type.Literal('moderation')], {
        description: 'what a declared model serves: chat (chat completions, responses, batches), embeddings or moderation',
      }),
    ),
    base_url: Type.Optional(Type.String({ pattern: '^https?://', description: 'OpenAI-compatible base URL, ending in /v1' })),
    upstream_model: Type.Optional(Type.String({ minLength: 1 })),
    ...ProviderFileFields,
    timeout_ms: Type.Optional(PositiveInt('upstream request timeout')),
    drop_params: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.String({ minLength: 1 }), {
            description: 'request fields never sent to this upstream (for an engine that rejects them); the rest are carried through',
          }),
          Type.Boolean({ description: "true: drop every field the model's protocol cannot carry instead of refusing the request with 400" }),
        ],
        { description: 'fields never sent to this upstream, or true: every field its protocol cannot carry' },
      ),
    ),
    aliases: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'other exact names requests may give this model (e.g. claude-sonnet-4-6)' }),
    ),
    path: Type.Optional(Type.String({ minLength: 1, description: 'model directory, relative to models_dir' })),
    context_length: Type.Optional(PositiveInt('maximum input tokens')),
    max_output_tokens: Type.Optional(
      PositiveInt('output tokens assumed when reserving credit for a request that sets no cap (default: the context length, at most 4096)'),
    ),
    price: Type.Optional(
      Type.Object(
        {
          input_per_million_usd: Type.Optional(NonNegative('USD per million input tokens')),
          output_per_million_usd: Type.Optional(NonNegative('USD per million output tokens')),
          cached_input_per_million_usd: Type.Optional(NonNegative('USD per million input tokens read from the engine\'s prompt cache (default: the input price)')),
          cache_write_per_million_usd: Type.Optional(NonNegative('USD per million input tokens written to the engine\'s prompt cache (default: the input price)')),
        },
        { additionalProperties: false },
      ),
    ),
    ...ModelRoutingFileFields,
  },
  { additionalProperties: false },
);

/** The core's keys of sluice.yaml; the features' sections add theirs (sections.ts). */
export const CoreFileSchema = Type.Object(
  {
    server: Type.Optional(
      Type.Object(
        {
          host: Type.Optional(Type.String({ minLength: 1 })),
          port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
          body_limit_mb: Type.Optional(PositiveInt('JSON body limit in MB')),
          trust_proxy: Type.Optional(Type.Boolean()),
          shutdown_grace_seconds: Type.Optional(
            Type.Number({ minimum: 0.1, maximum: 3600, description: 'on SIGTERM, how long in-flight requests and streams may finish before the process exits (fractions allowed)' }),
          ),
          headers_timeout_ms: Type.Optional(PositiveInt('time a client has to send the request line and headers (default 30000)')),
          body_idle_timeout_ms: Type.Optional(
            PositiveInt('longest pause between two pieces of a request body before 408 (default 30000)'),
          ),
          request_timeout_ms: Type.Optional(
            PositiveInt('time a client has to send a whole request, body included (default 900000: 100 MB at 115 KB/s)'),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    log_level: Type.Optional(
      Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
    ),
    data_dir: Type.Optional(Type.String({ minLength: 1 })),
    database_url: Type.Optional(Type.String({ pattern: '^(postgres(ql)?://|sqlite:)' })),
    database_usage_synchronous_commit: Type.Optional(Type.Boolean()),
    database_prepared_statements: Type.Optional(Type.Boolean()),
    redis_url: Type.Optional(Type.String({ pattern: '^rediss?://' })),
    blobs: Type.Optional(
      Type.Object(
        {
          url: Type.Optional(
            Type.String({ pattern: '^s3://', description: 's3://bucket/prefix?endpoint=…&region=…&force_path_style=true (default: local disk)' }),
          ),
          access_key_id: Type.Optional(Type.String({ minLength: 1 })),
          secret_access_key: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    models_dir: Type.Optional(Type.String({ minLength: 1 })),
    free_credits_usd: Type.Optional(NonNegative('credits granted to every new project')),
    billing: Type.Optional(
      Type.Object(
        {
          lower_output_cap: Type.Optional(
            Type.Boolean({ description: "grant a call with no output cap the largest cap the payer's free credit affords instead of refusing it" }),
          ),
          min_output_tokens: Type.Optional(
            PositiveInt("the smallest output cap a call is lowered to beside the payer's other calls; below it the call waits for them"),
          ),
          default_hold_tokens: Type.Optional(
            PositiveInt('output tokens held for a call that set no cap and whose worst case does not fit (the model\'s own default cap when smaller)'),
          ),
          hold_wait_ms: Type.Optional(
            Type.Integer({ minimum: 0, description: "how long a call waits for credit the payer's other calls hold before it is refused" }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    rate_limits: Type.Optional(
      Type.Object(
        {
          requests_per_minute: Type.Optional(PositiveInt('per API key')),
          redis_prefix: Type.Optional(Type.String({ minLength: 1, description: 'key prefix of the shared counters in Redis' })),
        },
        { additionalProperties: false },
      ),
    ),
    auth: Type.Optional(
      Type.Object({ cache_ttl_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })) }, { additionalProperties: false }),
    ),
    workers: Type.Optional(Type.Object({ in_process: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    outbox: Type.Optional(
      Type.Object(
        { max_attempts: Type.Optional(PositiveInt('delivery attempts of a settlement message before it is marked dead')) },
        { additionalProperties: false },
      ),
    ),
    models: Type.Optional(Type.Record(Type.String(), ModelFileSchema)),
    routing: Type.Optional(RoutingFileSchema),
    runtimes: Type.Optional(
      Type.Object(
        {
          dir: Type.Optional(Type.String({ minLength: 1, description: 'where `sluice runtimes add` installs on-demand runtimes (default: <data_dir>/runtimes)' })),
          idle_unload_seconds: Type.Optional(Type.Integer({ minimum: 0, description: 'release an idle in-process model after this long; 0 never' })),
          onnx_threads: Type.Optional(PositiveInt('threads one ONNX graph run may use (default: all cores; embedding models: 1 per copy, one copy per core)')),
          gguf_threads: Type.Optional(PositiveInt('threads llama.cpp uses per GGUF model (default: all cores)')),
          gguf_context_size: Type.Optional(PositiveInt('context window (tokens) of GGUF chat models')),
          embedding_batch_size: Type.Optional(PositiveInt('most inputs coalesced into one embedding runtime call')),
          embedding_batch_wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'under load, how long a freed embedding runtime waits to fill a batch' })),
        },
        { additionalProperties: false },
      ),
    ),
    hub: Type.Optional(
      Type.Object(
        {
          endpoint: Type.Optional(Type.String({ pattern: '^https?://', description: 'Hugging Face Hub endpoint (HF_ENDPOINT)' })),
          connect_timeout_ms: Type.Optional(PositiveInt('`sluice models pull`: time to connect to the Hub (default 10000)')),
          idle_timeout_ms: Type.Optional(PositiveInt('`sluice models pull`: longest silence of the Hub mid-answer (default 30000)')),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The core's keys of the file, validated. */
export type ConfigFile = Static<typeof CoreFileSchema>;
export type ModelFileConfig = Static<typeof ModelFileSchema>;

export type * from './config.types.js';
