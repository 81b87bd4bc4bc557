/**
 * The resolved, typed configuration of the core (load.ts builds it from the file schema
 * in schema.ts and the environment); the features' sections add theirs (sections.ts), and
 * `Config` is both.
 */
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import type { RoutingConfig } from './routing-config.js';

/** A model as the config resolves it: the domain's ModelSpec (catalog entry, price, limits, binding). */
export type ModelConfig = ModelSpec;

/** An S3-compatible bucket (AWS S3, MinIO, R2, Ceph RGW); credentials are secrets, never logged. */
export interface S3BlobConfig {
  kind: 's3';
  bucket: string;
  /** Keys are stored under this prefix ('' for the bucket's root). */
  prefix: string;
  /** null: AWS S3's own endpoint for the region. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** null: the SDK's default chain (instance profile, web identity, …). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

/** The OTLP over HTTP encodings Sluice exports in (gRPC is not supported). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** OpenTelemetry tracing (src/config/tracing-config.ts); null endpoint: the exporter's default. */
export interface TracingConfig {
  enabled: boolean;
  endpoint: string | null;
  serviceName: string;
  /**
   * How spans are encoded to the collector: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
   * OTEL_EXPORTER_OTLP_PROTOCOL, else `http/protobuf` (the OTLP exporter specification's default).
   */
  protocol: OtlpProtocol;
  /**
   * OTEL_SEMCONV_STABILITY_OPT_IN names `gen_ai_latest_experimental`: model calls are traced
   * in OpenTelemetry's GenAI conventions (src/observability/genai-tracing.ts), one span per
   * call and one per attempt, instead of the `inference.<capability>` spans.
   */
  genAi: boolean;
}

export type BlobConfig = { kind: 'local'; root: string } | S3BlobConfig;

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'postgres';
      url: string;
      /**
       * false: usage commits (a call's record and its debit) return before PostgreSQL
       * flushes them to disk; a PostgreSQL crash can lose the last moment of them
       * (docs/scaling-out.md). Every other write stays synchronous.
       */
      usageSynchronousCommit: boolean;
      /** Statements a connection repeats are prepared once on it (storage/db/prepared-statements.ts); false behind a transaction-mode pooler that cannot carry them. */
      preparedStatements: boolean;
    };

export interface BillingConfig {
  freeCreditsMicros: number;
  /** A call that set no output cap and whose worst case does not fit runs with the cap the free credit affords. */
  lowerOutputCap: boolean;
  /** The smallest cap a call is lowered to beside the payer's other calls (a call's own default cap, when smaller). */
  minOutputTokens: number;
  /** Output tokens held for a call that set no cap and whose worst case does not fit. */
  defaultHoldTokens: number;
  /** How long a call waits for credit the payer's other calls hold before it is refused. */
  holdWaitMs: number;
}

/** In-process model runtimes (onnx, gguf). */
export interface RuntimesConfig {
  /** Where on-demand runtimes (the GGUF runtime) are installed and loaded from. */
  dir: string;
  /** 0 keeps models loaded until shutdown. */
  idleUnloadSeconds: number;
  /** null: all cores. */
  onnxThreads: number | null;
  ggufThreads: number | null;
  ggufContextSize: number;
  embeddingBatchSize: number;
  embeddingBatchWaitMs: number;
}

/**
 * How long a client may take to send its request. None of them bounds the answer: a long
 * inference or a stream runs as long as its backend allows.
 */
export interface ServerTimeouts {
  /** Request line and headers. */
  headersMs: number;
  /** The longest silence while a body is being received. */
  bodyIdleMs: number;
  /** The whole request, body included. */
  requestMs: number;
}

export interface CoreConfig {
  server: { host: string; port: number; bodyLimitBytes: number; trustProxy: boolean; shutdownGraceMs: number; timeouts: ServerTimeouts };
  logLevel: string;
  dataDir: string;
  database: DatabaseConfig;
  blobs: BlobConfig;
  tracing: TracingConfig;
  redisUrl: string | null;
  adminToken: string | null;
  auth: { cacheTtlMs: number };
  billing: BillingConfig;
  rateLimit: { requestsPerMinute: number; redisPrefix: string };
  modelsDir: string;
  models: Readonly<Record<string, ModelConfig>>;
  /** How calls spread over a model's deployments (src/config/routing-config.ts). */
  routing: RoutingConfig;
  /** Start-up log lines: catalog models that sluice.yaml overrides or replaces. */
  modelNotices: readonly string[];
  workers: { inProcess: boolean };
  /** The settlement outbox's deliverer. */
  outbox: { maxAttempts: number };
  runtimes: RuntimesConfig;
  /** Where `sluice models pull` downloads from; the token is a secret, never logged. */
  hub: { endpoint: string; token: string | null; connectTimeoutMs: number; idleTimeoutMs: number };
  /** Where the file was read from, for the start-up summary. */
  configFile: string | null;
}
