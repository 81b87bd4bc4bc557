/**
 * loadConfig(env): reads the optional YAML file and the environment, validates both,
 * and returns a frozen Config: the core's keys (resolved here), then each feature's
 * section in CONFIG_SECTIONS (resolved by its own file). Every problem is collected and
 * reported at once, each naming the key or variable and why it is wrong.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value, type ValueError } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { usdToMicros } from '../domain/shared/money.js';
import { describeBlobConfig, resolveBlobConfig } from './blob-config.js';
import { resolveTracingConfig } from './tracing-config.js';
import { describeGatewayConfig } from './gateway-config.js';
import { resolveModels } from './models-config.js';
import { resolveRouting } from './routing-config.js';
import { envBoolean, envInteger, envNumber, envSecret } from './env.js';
import type { ConfigSection, Env, SectionInput } from './section.js';
import { CONFIG_SECTIONS, type SectionsConfig } from './sections.js';
import { CoreFileSchema, type Config, type ConfigFile, type CoreConfig, type DatabaseConfig, type ServerTimeouts } from './schema.js';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[], source: string) {
    super(`Invalid configuration (${source}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The whole file: the core's keys and each feature's section, and no other key. */
const FileSchema = Type.Object(
  { ...CoreFileSchema.properties, ...Object.fromEntries(CONFIG_SECTIONS.map((section) => [section.key, Type.Optional(section.schema)])) },
  { additionalProperties: false },
);

/** The file as validated: the core's keys typed, the sections' read by their sections. */
type FileContents = ConfigFile & Readonly<Record<string, unknown>>;

function readConfigFile(env: Env, cwd: string, problems: string[]): { file: FileContents; source: string | null } {
  const explicit = env.SLUICE_CONFIG;
  const candidate = explicit ? path.resolve(cwd, explicit) : path.resolve(cwd, 'sluice.yaml');
  if (!existsSync(candidate)) {
    if (explicit) problems.push(`SLUICE_CONFIG: file not found: ${candidate}`);
    return { file: {}, source: null };
  }
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(candidate, 'utf8')) ?? {};
  } catch (err) {
    problems.push(`${candidate}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    return { file: {}, source: candidate };
  }
  for (const error of Value.Errors(FileSchema, raw)) {
    const key = error.path.replace(/^\//, '').replaceAll('/', '.') || '(root)';
    problems.push(`${key}: ${describeSchemaError(error)}`);
  }
  if (problems.length > 0) return { file: {}, source: candidate };
  return { file: raw as FileContents, source: candidate };
}

/** Why a value failed the schema: the allowed values of an enum, else TypeBox's message and the key's description. */
function describeSchemaError(error: ValueError): string {
  const got = error.value === null || typeof error.value !== 'object' ? `, got ${JSON.stringify(error.value)}` : '';
  const options = (error.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const);
  if (options && options.length > 0 && options.every((o) => typeof o === 'string')) {
    return `must be one of ${options.join(', ')}${got}`;
  }
  const why = error.schema.description ? `${error.message} (${error.schema.description})` : error.message;
  return error.message === 'Unexpected property' ? `${why} (unknown key)` : `${why}${got}`;
}

interface PostgresOptions {
  usageSynchronousCommit: boolean;
  preparedStatements: boolean;
}

function resolveDatabase(url: string | undefined, postgres: PostgresOptions, dataDir: string, cwd: string, problems: string[]): DatabaseConfig {
  if (!url) return { kind: 'sqlite', path: path.join(dataDir, 'sluice.db') };
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url, ...postgres };
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
    return { kind: 'sqlite', path: file === ':memory:' ? file : path.resolve(cwd, file) };
  }
  problems.push('DATABASE_URL: must start with postgres://, postgresql:// or sqlite:');
  return { kind: 'sqlite', path: path.join(dataDir, 'sluice.db') };
}

function resolveTimeouts(file: ConfigFile, problems: string[]): ServerTimeouts {
  const timeouts = {
    headersMs: file.server?.headers_timeout_ms ?? 30_000,
    bodyIdleMs: file.server?.body_idle_timeout_ms ?? 30_000,
    requestMs: file.server?.request_timeout_ms ?? 900_000,
  };
  // Node refuses a header timeout longer than the whole-request one.
  if (timeouts.headersMs > timeouts.requestMs) {
    problems.push('server.headers_timeout_ms: must not exceed server.request_timeout_ms');
  }
  return timeouts;
}

/** Pure apart from reading the config file named by the environment. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Readonly<Config> {
  const problems: string[] = [];
  const { file, source } = readConfigFile(env, cwd, problems);
  const core = resolveCore(file, env, cwd, problems, source);
  const sections: Record<string, unknown> = {};
  for (const section of CONFIG_SECTIONS) sections[section.key] = resolveSection(section, { file: file[section.key], env, cwd, core, problems });
  if (env.HF_ENDPOINT && !/^https?:\/\//.test(env.HF_ENDPOINT)) problems.push('HF_ENDPOINT: must start with http:// or https://');
  if (problems.length > 0) throw new ConfigError(problems, source ?? 'environment');
  return deepFreeze({ ...core, ...(sections as SectionsConfig) });
}

/** A section's value, from its key of the file (which readConfigFile validated against the section's schema). */
function resolveSection(section: ConfigSection<string, TSchema, unknown>, input: SectionInput<unknown>): unknown {
  return section.resolve(input);
}

/** The core's keys: the server, storage, identity, billing, models and runtimes. */
function resolveCore(file: ConfigFile, env: Env, cwd: string, problems: string[], source: string | null): CoreConfig {
  const dataDir = path.resolve(cwd, env.DATA_DIR ?? file.data_dir ?? './data');
  const modelsDir = path.resolve(cwd, env.MODELS_DIR ?? file.models_dir ?? path.join(dataDir, 'models'));
  const redisUrl = env.REDIS_URL || file.redis_url || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL: must start with redis:// or rediss://');
  const workersEnv = env.SLUICE_WORKERS;
  if (workersEnv && !['in-process', 'off'].includes(workersEnv)) problems.push('SLUICE_WORKERS: must be "in-process" or "off"');
  const { models, notices: modelNotices } = resolveModels(file, env, modelsDir, problems, cwd);
  return {
    server: resolveServer(file, env, problems),
    logLevel: env.LOG_LEVEL ?? file.log_level ?? 'info',
    dataDir,
    database: resolveDatabase(
      env.DATABASE_URL ?? file.database_url,
      {
        usageSynchronousCommit: envBoolean(env, 'DATABASE_USAGE_SYNCHRONOUS_COMMIT', problems) ?? file.database_usage_synchronous_commit ?? true,
        preparedStatements: envBoolean(env, 'DATABASE_PREPARED_STATEMENTS', problems) ?? file.database_prepared_statements ?? true,
      },
      dataDir,
      cwd,
      problems,
    ),
    blobs: resolveBlobConfig(file, env, dataDir, problems),
    tracing: resolveTracingConfig(env, problems),
    redisUrl,
    adminToken: envSecret(env, 'SLUICE_ADMIN_TOKEN', cwd, problems),
    auth: { cacheTtlMs: envInteger(env, 'AUTH_CACHE_TTL_MS', problems, 0, 60_000) ?? file.auth?.cache_ttl_ms ?? 5_000 },
    billing: resolveBilling(file, env, problems),
    rateLimit: {
      requestsPerMinute: envInteger(env, 'RATE_LIMIT_RPM', problems, 1) ?? file.rate_limits?.requests_per_minute ?? 600,
      redisPrefix: file.rate_limits?.redis_prefix ?? 'sluice:rl',
    },
    modelsDir,
    models,
    routing: resolveRouting(file.routing),
    modelNotices,
    workers: { inProcess: workersEnv ? workersEnv === 'in-process' : (file.workers?.in_process ?? true) },
    outbox: { maxAttempts: envInteger(env, 'OUTBOX_MAX_ATTEMPTS', problems, 1) ?? file.outbox?.max_attempts ?? 10 },
    runtimes: resolveRuntimes(file, env, cwd, dataDir, problems),
    hub: {
      endpoint: (env.HF_ENDPOINT || file.hub?.endpoint || 'https://huggingface.co').replace(/\/+$/, ''),
      token: envSecret(env, 'HF_TOKEN', cwd, problems),
      connectTimeoutMs: file.hub?.connect_timeout_ms ?? 10_000,
      idleTimeoutMs: file.hub?.idle_timeout_ms ?? 30_000,
    },
    configFile: source,
  };
}

function resolveServer(file: ConfigFile, env: Env, problems: string[]): CoreConfig['server'] {
  return {
    host: env.HOST ?? file.server?.host ?? '127.0.0.1',
    port: envInteger(env, 'PORT', problems, 0, 65535) ?? file.server?.port ?? 8080,
    bodyLimitBytes: (file.server?.body_limit_mb ?? 10) * 1024 * 1024,
    trustProxy: file.server?.trust_proxy ?? false,
    shutdownGraceMs: Math.round((envNumber(env, 'SHUTDOWN_GRACE_SECONDS', problems, 0.1, 3600) ?? file.server?.shutdown_grace_seconds ?? 30) * 1000),
    timeouts: resolveTimeouts(file, problems),
  };
}

function resolveBilling(file: ConfigFile, env: Env, problems: string[]): CoreConfig['billing'] {
  const freeCreditsUsd = envNumber(env, 'FREE_CREDITS_USD', problems, 0) ?? file.free_credits_usd ?? 1;
  return {
    freeCreditsMicros: usdToMicros(freeCreditsUsd),
    lowerOutputCap: envBoolean(env, 'BILLING_LOWER_OUTPUT_CAP', problems) ?? file.billing?.lower_output_cap ?? true,
    minOutputTokens: envInteger(env, 'BILLING_MIN_OUTPUT_TOKENS', problems, 1) ?? file.billing?.min_output_tokens ?? 16,
    defaultHoldTokens: envInteger(env, 'BILLING_DEFAULT_HOLD_TOKENS', problems, 1) ?? file.billing?.default_hold_tokens ?? 1024,
    holdWaitMs: envInteger(env, 'BILLING_HOLD_WAIT_MS', problems, 0) ?? file.billing?.hold_wait_ms ?? 2_000,
  };
}

function resolveRuntimes(file: ConfigFile, env: Env, cwd: string, dataDir: string, problems: string[]): CoreConfig['runtimes'] {
  return {
    dir: path.resolve(cwd, env.SLUICE_RUNTIMES_DIR || file.runtimes?.dir || path.join(dataDir, 'runtimes')),
    idleUnloadSeconds: envInteger(env, 'RUNTIMES_IDLE_UNLOAD_SECONDS', problems, 0) ?? file.runtimes?.idle_unload_seconds ?? 900,
    onnxThreads: file.runtimes?.onnx_threads ?? null,
    ggufThreads: file.runtimes?.gguf_threads ?? null,
    ggufContextSize: file.runtimes?.gguf_context_size ?? 4096,
    embeddingBatchSize: file.runtimes?.embedding_batch_size ?? 32,
    embeddingBatchWaitMs: file.runtimes?.embedding_batch_wait_ms ?? 2,
  };
}

/** loadConfig for process entry points: an invalid configuration is printed and exits 78 (EX_CONFIG). */
export function loadConfigOrExit(env: Env = process.env, cwd: string = process.cwd()): Readonly<Config> {
  try {
    return loadConfig(env, cwd);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78);
    }
    throw err;
  }
}

/** The database the environment names, for start-up error messages; null when the config does not load. */
export function databaseConfigOrNull(env: Env = process.env, cwd: string = process.cwd()): DatabaseConfig | null {
  try {
    return loadConfig(env, cwd).database;
  } catch {
    return null;
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** A one-screen summary for the start-up log, with secrets redacted. */
export function describeConfig(config: Config): Record<string, unknown> {
  return {
    configFile: config.configFile,
    listen: `${config.server.host}:${config.server.port}`,
    dataDir: config.dataDir,
    database: config.database.kind === 'postgres' ? 'postgres (DATABASE_URL)' : config.database.path,
    redis: config.redisUrl ? 'configured' : 'none (in-memory rate limits)',
    blobs: describeBlobConfig(config.blobs),
    tracing: config.tracing.enabled ? `otlp ${config.tracing.endpoint ?? '(exporter default)'}${config.tracing.genAi ? ', GenAI conventions' : ''}` : 'off',
    adminApi: config.adminToken ? 'enabled' : 'disabled',
    gateway: describeGatewayConfig(config.gateway),
    workers: config.workers.inProcess ? 'in-process' : 'off',
    storefront: config.storefront ? `${config.storefront.prefix} (${config.storefront.plans.length} plan(s))` : 'off',
    upstreamModels: Object.values(config.models)
      .filter((m) => m.binding.baseUrl)
      .map((m) => m.id),
    declaredModels: Object.values(config.models)
      .filter((m) => m.declared)
      .map((m) => m.id),
  };
}
