/**
 * The storefront's configuration: `storefront:` in sluice.yaml plus the STOREFRONT_*
 * environment twins. The storefront is on when a plan exists.
 */
import { Type, type Static } from '@sinclair/typebox';
import { configSection } from './section.js';

const Usd = (description: string) => Type.String({ pattern: '^\\d+(\\.\\d{1,2})?$', description });

export const StorefrontFileSchema = Type.Object(
  {
    prefix: Type.Optional(Type.String({ pattern: '^/[A-Za-z0-9/_-]*$', description: 'mount path on the main listener (default /storefront)' })),
    seller: Type.Optional(
      Type.Object(
        {
          id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          hosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'host names that map to this seller (default: every host)' })),
        },
        { additionalProperties: false },
      ),
    ),
    plans: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
            kind: Type.Optional(Type.Literal('credits')),
            description: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            minimum_usd: Type.Optional(Usd('smallest purchase (at least 0.01)')),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    anonymous_limit_usd: Type.Optional(Usd('largest purchase without an agent token; it issues a receipt')),
    requests_per_minute: Type.Optional(Type.Integer({ minimum: 1, description: 'storefront chat calls per agent or receipt' })),
    token_ttl_seconds: Type.Optional(Type.Integer({ minimum: 30, maximum: 3600, description: 'lifetime of an access token' })),
    x402: Type.Optional(
      Type.Object(
        {
          facilitator_url: Type.Optional(Type.String({ pattern: '^https?://' })),
          pay_to: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })),
          network: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+:[A-Za-z0-9-]+$' })),
          asset: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })),
          timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    mpp: Type.Optional(
      Type.Object(
        {
          realm: Type.Optional(Type.String({ minLength: 1 })),
          method: Type.Optional(Type.Literal('fake', { description: 'the MPP payment method offered (only the built-in test method ships)' })),
        },
        { additionalProperties: false },
      ),
    ),
    card: Type.Optional(
      Type.Object(
        { provider: Type.Optional(Type.Union([Type.Literal('fake'), Type.Literal('stripe')])) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type StorefrontFile = Static<typeof StorefrontFileSchema>;

export interface StorefrontPlanConfig {
  id: string;
  kind: 'credits';
  description: string;
  minimumMicros: number;
}

export interface StorefrontConfig {
  prefix: string;
  seller: { id: string; name: string; hosts: readonly string[] };
  plans: readonly StorefrontPlanConfig[];
  anonymousLimitMicros: number;
  requestsPerMinute: number;
  tokenTtlSeconds: number;
  /** Agent id → public JWK (STOREFRONT_AGENT_KEYS). */
  agentKeys: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Signs access tokens (derived per rotation period); null: a random secret per process. */
  tokenSecret: string | null;
  x402: { facilitatorUrl: string; payTo: string; network: string; asset: string | null; timeoutMs: number } | null;
  mpp: { realm: string; secretKey: string; method: 'fake' } | null;
  card: { provider: 'fake' } | { provider: 'stripe'; secretKey: string; webhookSecret: string | null } | null;
}

type Env = Readonly<Record<string, string | undefined>>;

const usdMicros = (usd: string): number => {
  const [whole, cents = ''] = usd.split('.');
  return Number(whole) * 1_000_000 + Number(cents.padEnd(2, '0')) * 10_000;
};

function agentKeysOf(env: Env, problems: string[]): StorefrontConfig['agentKeys'] {
  const raw = env.STOREFRONT_AGENT_KEYS;
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    problems.push('STOREFRONT_AGENT_KEYS: must be JSON: {"<agent id>": <public JWK>, …}');
    return {};
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push('STOREFRONT_AGENT_KEYS: must be a JSON object of agent id → public JWK');
    return {};
  }
  const keys: Record<string, Record<string, unknown>> = Object.create(null) as Record<string, Record<string, unknown>>;
  for (const [agentId, jwk] of Object.entries(parsed)) {
    if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(agentId)) problems.push(`STOREFRONT_AGENT_KEYS: agent id "${agentId.slice(0, 40)}" is not a plain identifier`);
    else if (!jwk || typeof jwk !== 'object' || typeof (jwk as { kty?: unknown }).kty !== 'string' || 'd' in jwk) {
      problems.push(`STOREFRONT_AGENT_KEYS.${agentId}: must be a public JWK (kty, no private part)`);
    } else keys[agentId] = jwk as Record<string, unknown>;
  }
  return keys;
}

function x402Of(env: Env, file: StorefrontFile, problems: string[]): StorefrontConfig['x402'] {
  const facilitatorUrl = env.STOREFRONT_FACILITATOR_URL || file.x402?.facilitator_url;
  const payTo = env.STOREFRONT_PAY_TO || file.x402?.pay_to;
  if (!facilitatorUrl && !payTo) return null;
  if (!facilitatorUrl || !/^https?:\/\//.test(facilitatorUrl)) problems.push('STOREFRONT_FACILITATOR_URL (storefront.x402.facilitator_url): required with a pay-to address, an http(s) URL');
  if (!payTo || !/^0x[0-9a-fA-F]{40}$/.test(payTo)) problems.push('STOREFRONT_PAY_TO (storefront.x402.pay_to): required with a facilitator, an EVM address 0x…');
  const network = env.STOREFRONT_NETWORK || file.x402?.network || 'eip155:84532';
  if (!/^[a-z0-9-]+:[A-Za-z0-9-]+$/.test(network)) problems.push(`STOREFRONT_NETWORK: must be a CAIP-2 id such as eip155:84532, got "${network}"`);
  const asset = env.STOREFRONT_ASSET || file.x402?.asset || null;
  if (asset !== null && !/^0x[0-9a-fA-F]{40}$/.test(asset)) problems.push('STOREFRONT_ASSET: must be a token contract address 0x…');
  return { facilitatorUrl: (facilitatorUrl ?? '').replace(/\/+$/, ''), payTo: payTo ?? '', network, asset, timeoutMs: file.x402?.timeout_ms ?? 30_000 };
}

function cardOf(env: Env, file: StorefrontFile, problems: string[]): StorefrontConfig['card'] {
  const provider = env.STOREFRONT_CARD_PROVIDER || file.card?.provider;
  if (!provider) return null;
  if (provider === 'fake') return { provider };
  if (provider !== 'stripe') {
    problems.push(`STOREFRONT_CARD_PROVIDER: must be "fake" or "stripe", got "${provider}"`);
    return null;
  }
  const secretKey = env.STRIPE_SECRET_KEY;
  if (!secretKey) problems.push('STRIPE_SECRET_KEY: required when the card provider is stripe');
  return { provider, secretKey: secretKey ?? '', webhookSecret: env.STRIPE_WEBHOOK_SECRET || null };
}

/** The storefront, or null when no plan is configured. */
export function resolveStorefront(env: Env, file: StorefrontFile | undefined, problems: string[]): StorefrontConfig | null {
  if (!file?.plans || file.plans.length === 0) return null;
  const plans = file.plans.map((p) => ({
    id: p.id,
    kind: 'credits' as const,
    description: p.description ?? 'Credits',
    minimumMicros: Math.max(10_000, usdMicros(p.minimum_usd ?? '0.01')),
  }));
  if (new Set(plans.map((p) => p.id)).size !== plans.length) problems.push('storefront.plans: plan ids must be unique');
  const anonymousRaw = env.STOREFRONT_ANONYMOUS_LIMIT_USD ?? file.anonymous_limit_usd ?? '5.00';
  if (!/^\d+(\.\d{1,2})?$/.test(anonymousRaw)) problems.push(`STOREFRONT_ANONYMOUS_LIMIT_USD: must be dollars with at most cents, got "${anonymousRaw}"`);
  const mppSecret = env.STOREFRONT_MPP_SECRET_KEY || null;
  if (file.mpp && (!mppSecret || Buffer.byteLength(mppSecret) < 32)) problems.push('STOREFRONT_MPP_SECRET_KEY: required with storefront.mpp, at least 32 bytes');
  const tokenSecret = env.STOREFRONT_TOKEN_SECRET || null;
  if (tokenSecret !== null && Buffer.byteLength(tokenSecret) < 32) problems.push('STOREFRONT_TOKEN_SECRET: at least 32 bytes');
  return {
    prefix: (file.prefix ?? '/storefront').replace(/\/+$/, ''),
    seller: { id: file.seller?.id ?? 'sluice', name: file.seller?.name ?? 'Sluice', hosts: (file.seller?.hosts ?? []).map((h) => h.toLowerCase()) },
    plans,
    anonymousLimitMicros: /^\d+(\.\d{1,2})?$/.test(anonymousRaw) ? usdMicros(anonymousRaw) : 0,
    requestsPerMinute: file.requests_per_minute ?? 600,
    tokenTtlSeconds: file.token_ttl_seconds ?? 900,
    agentKeys: agentKeysOf(env, problems),
    tokenSecret,
    x402: x402Of(env, file, problems),
    mpp: file.mpp && mppSecret ? { realm: file.mpp.realm ?? 'sluice', secretKey: mppSecret, method: 'fake' } : null,
    card: cardOf(env, file, problems),
  };
}

/** `storefront:`; the storefront is on (`config.storefront` not null) when a plan is configured. */
export const storefrontSection = configSection({
  key: 'storefront',
  schema: StorefrontFileSchema,
  resolve: ({ file, env, problems }) => resolveStorefront(env, file, problems),
});
