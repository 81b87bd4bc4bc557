/**
 * The one configuration schema: the optional YAML file (`SLUICE_CONFIG`, default
 * `./sluice.yaml`) validated with TypeBox; the resolved, typed `Config` the rest of the
 * code receives is in config.types.ts (re-exported here). Only `src/config/` reads the
 * environment.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StorefrontFileSchema } from './storefront-config.js';
import { ModelRoutingFileFields, RoutingFileSchema } from './routing-config.js';
import { DEFAULT_UPSTREAM_PROTOCOL, RUNTIME_KINDS } from '../domain/models/model-spec.types.js';

export type { Deployment, RoutingConfig, RoutingStrategy } from './routing-config.js';

const PositiveInt = (description: string) => Type.Integer({ minimum: 1, description });
const NonNegative = (description: string) => Type.Number({ minimum: 0, description });

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
    api_key_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
    timeout_ms: Type.Optional(PositiveInt('upstream request timeout')),
    drop_params: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'request fields never sent to this upstream (for an engine that rejects them); the rest are carried through',
      }),
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
        },
        { additionalProperties: false },
      ),
    ),
    ...ModelRoutingFileFields,
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    server: Type.Optional(
      Type.Object(
        {
          host: Type.Optional(Type.String({ minLength: 1 })),
          port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
          body_limit_mb: Type.Optional(PositiveInt('JSON body limit in MB')),
          trust_proxy: Type.Optional(Type.Boolean()),
          shutdown_grace_seconds: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 3600, description: 'on SIGTERM, how long in-flight requests and streams may finish before the process exits' }),
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
    console: Type.Optional(
      Type.Object(
        {
          session_ttl_minutes: Type.Optional(PositiveInt('how long a console sign-in lasts (default 720)')),
          sign_in_attempts_per_minute: Type.Optional(PositiveInt('console sign-in attempts per client address per minute (default 10)')),
        },
        { additionalProperties: false },
      ),
    ),
    workers: Type.Optional(Type.Object({ in_process: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    batches: Type.Optional(
      Type.Object(
        {
          completion_window_seconds: Type.Optional(PositiveInt('how long a batch may run before it expires')),
          global_concurrency: Type.Optional(PositiveInt('lines in flight per worker process')),
          per_batch_concurrency: Type.Optional(PositiveInt('lines in flight per batch')),
          max_attempts: Type.Optional(PositiveInt('attempts per line on retryable failures')),
          lease_seconds: Type.Optional(PositiveInt('how long a claimed shard stays owned without renewal')),
          shard_lines: Type.Optional(PositiveInt('input lines per shard')),
          retry_base_ms: Type.Optional(PositiveInt('first retry delay of a batch line; doubles per attempt, with jitter')),
          validation_timeout_seconds: Type.Optional(
            PositiveInt('a batch validating this long without a heartbeat (its creating process died) is failed'),
          ),
          endpoints: Type.Optional(
            Type.Array(Type.String(), {
              description: 'the endpoints a batch may use (default: /v1/chat/completions only)',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    responses: Type.Optional(
      Type.Object(
        {
          retention_days: Type.Optional(PositiveInt('how long stored responses (and background responses\' events) are kept (default 30)')),
          max_attempts: Type.Optional(PositiveInt('runs of a background response before one that keeps losing its worker is failed (default 3)')),
        },
        { additionalProperties: false },
      ),
    ),
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
    decision: Type.Optional(
      Type.Object(
        {
          default_model: Type.Optional(Type.String({ minLength: 1, description: 'the decision model `jev-latest` and the other aliases answer with (unset: the one decision model that is ready)' })),
          aliases: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'model names sent by System One clients (default: jev-latest, jev)' })),
          scorers: Type.Optional(
            Type.Record(Type.String(), Type.Union([Type.Literal('embedding'), Type.Literal('nli'), Type.Literal('llm')]), {
              description: 'zero-shot scorer per decision model (default embedding)',
            }),
          ),
          nli_model: Type.Optional(Type.String({ minLength: 1, description: 'the NLI cross-encoder the nli scorer runs (default deberta-v3-small)' })),
          llm_model: Type.Optional(
            Type.String({ minLength: 1, description: 'the chat model the llm scorer asks (an upstream with logprobs, or an in-process gguf model)' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    gateway: Type.Optional(
      Type.Object(
        {
          signing_secrets: Type.Optional(
            Type.Record(Type.String({ minLength: 1 }), Type.String({ minLength: 1 }), {
              description: 'signing secret by key id ({kid: secret}); the gateway is off without one',
            }),
          ),
          signing_secrets_file: Type.Optional(Type.String({ minLength: 1, description: 'a JSON file holding {kid: secret}' })),
          api_url: Type.Optional(Type.String({ pattern: '^https?://', description: "the intermediary's API (allowance checks, usage reports)" })),
          read_key: Type.Optional(Type.String({ minLength: 1, description: "Sluice's read key at the intermediary (allowance checks)" })),
          write_key: Type.Optional(Type.String({ minLength: 1, description: "Sluice's write key at the intermediary (usage reports)" })),
          check_timeout_ms: Type.Optional(PositiveInt('how long an allowance check may take before the call proceeds (fail open; default 1500)')),
          tolerance_seconds: Type.Optional(PositiveInt('how far a signature timestamp may be from now, either way (default 300)')),
          intermediary_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the payer id usage records name (default "default")' })),
          allowance_cache_ms: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 60_000, description: "how long an agent's allowed answer is reused (default 0: every call asks)" }),
          ),
          rate_limit_rpm: Type.Optional(PositiveInt('requests per minute per agent (default: rate_limits.requests_per_minute)')),
        },
        { additionalProperties: false },
      ),
    ),
    storefront: Type.Optional(StorefrontFileSchema),
    mcp: Type.Optional(
      Type.Object(
        {
          prefix: Type.Optional(Type.String({ pattern: '^/[A-Za-z0-9/_-]*$', description: 'mount path of the MCP endpoint on the main listener (default /mcp)' })),
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

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type ModelFileConfig = Static<typeof ModelFileSchema>;

export type * from './config.types.js';
