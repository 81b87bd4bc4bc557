/**
 * The signed gateway's configuration section, `gateway:`, and its GATEWAY_* variables.
 * Signing secrets come as a JSON object `{kid: secret}` (GATEWAY_SIGNING_SECRETS), or
 * from a file holding one (GATEWAY_SIGNING_SECRETS_FILE, `gateway.signing_secrets_file`).
 * No secret or key ever appears in a problem message or the start-up summary.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { PositiveInt } from './schema-kit.js';
import { configSection, type Env } from './section.js';

/** The signed gateway; secrets and keys are never logged. */
export interface GatewayConfig {
  /** kid → secret; empty: the gateway is off and every gateway route answers 401. */
  signingSecrets: ReadonlyMap<string, string>;
  apiUrl: string | null;
  readKey: string | null;
  writeKey: string | null;
  checkTimeoutMs: number;
  toleranceSeconds: number;
  intermediaryId: string;
  allowanceCacheMs: number;
  requestsPerMinute: number;
}

const GatewayFileSchema = Type.Object(
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
);

type GatewayFile = Static<typeof GatewayFileSchema>;

const KID = /^[A-Za-z0-9._-]{1,64}$/;

function parseSecrets(text: string, source: string, problems: string[]): Map<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    problems.push(`${source}: must be a JSON object {"<kid>": "<secret>", …}`);
    return new Map();
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(`${source}: must be a JSON object {"<kid>": "<secret>", …}`);
    return new Map();
  }
  return checkedSecrets(Object.entries(raw), source, problems);
}

function checkedSecrets(entries: [string, unknown][], source: string, problems: string[]): Map<string, string> {
  const secrets = new Map<string, string>();
  for (const [kid, secret] of entries) {
    if (!KID.test(kid)) problems.push(`${source}: key id ${JSON.stringify(kid.slice(0, 64))} must be 1–64 letters, digits, ".", "_" or "-"`);
    else if (typeof secret !== 'string' || secret.length < 16) problems.push(`${source}: the secret of key id ${kid} must be a string of at least 16 characters`);
    else secrets.set(kid, secret);
  }
  return secrets;
}

function readSecretsFile(fileName: string, source: string, cwd: string, problems: string[]): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(path.resolve(cwd, fileName), 'utf8');
  } catch {
    problems.push(`${source}: cannot read the file`);
    return new Map();
  }
  return parseSecrets(text, source, problems);
}

function resolveSecrets(env: Env, g: GatewayFile | undefined, cwd: string, problems: string[]): Map<string, string> {
  if (env.GATEWAY_SIGNING_SECRETS_FILE) return readSecretsFile(env.GATEWAY_SIGNING_SECRETS_FILE, 'GATEWAY_SIGNING_SECRETS_FILE', cwd, problems);
  if (env.GATEWAY_SIGNING_SECRETS) return parseSecrets(env.GATEWAY_SIGNING_SECRETS, 'GATEWAY_SIGNING_SECRETS', problems);
  if (g?.signing_secrets_file) return readSecretsFile(g.signing_secrets_file, 'gateway.signing_secrets_file', cwd, problems);
  if (g?.signing_secrets) return checkedSecrets(Object.entries(g.signing_secrets), 'gateway.signing_secrets', problems);
  return new Map();
}

function envPositive(env: Env, name: string, problems: string[]): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1) {
    problems.push(`${name}: must be a positive integer, got "${raw}"`);
    return undefined;
  }
  return Number(raw);
}

function resolveGatewayConfig(env: Env, file: GatewayFile | undefined, cwd: string, defaultRpm: number, problems: string[]): GatewayConfig {
  const g = file ?? {};
  const apiUrl = (env.GATEWAY_API_URL || g.api_url || null)?.replace(/\/+$/, '') ?? null;
  if (apiUrl !== null && !/^https?:\/\/[^/]+/.test(apiUrl)) problems.push('GATEWAY_API_URL: must be an http:// or https:// URL');
  const signingSecrets = resolveSecrets(env, file, cwd, problems);
  if (signingSecrets.size > 0 && apiUrl === null) {
    problems.push('GATEWAY_API_URL (gateway.api_url): required when signing secrets are set (the intermediary to check allowances with)');
  }
  return {
    signingSecrets,
    apiUrl,
    readKey: env.GATEWAY_READ_KEY || g.read_key || null,
    writeKey: env.GATEWAY_WRITE_KEY || g.write_key || null,
    checkTimeoutMs: envPositive(env, 'GATEWAY_CHECK_TIMEOUT_MS', problems) ?? g.check_timeout_ms ?? 1500,
    toleranceSeconds: envPositive(env, 'GATEWAY_TOLERANCE_SECONDS', problems) ?? g.tolerance_seconds ?? 300,
    intermediaryId: g.intermediary_id ?? 'default',
    allowanceCacheMs: g.allowance_cache_ms ?? 0,
    requestsPerMinute: g.rate_limit_rpm ?? defaultRpm,
  };
}

export const gatewaySection = configSection({
  key: 'gateway',
  schema: GatewayFileSchema,
  // An agent's rate limit defaults to an API key's.
  resolve: ({ file, env, cwd, core, problems }) => resolveGatewayConfig(env, file, cwd, core.rateLimit.requestsPerMinute, problems),
});

/** For the start-up summary: whether it is on, with which key ids; never a secret. */
export function describeGatewayConfig(gateway: GatewayConfig): string {
  if (gateway.signingSecrets.size === 0) return 'off';
  return `on (key ids ${[...gateway.signingSecrets.keys()].join(', ')}; intermediary configured)`;
}
