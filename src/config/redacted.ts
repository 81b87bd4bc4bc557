/**
 * The resolved configuration as an operator may read it (`sluice config show`): every
 * secret replaced by `[redacted]`, whatever section holds it. A property is secret by its
 * name (a key, secret, token, password, credentials or headers: provider keys, the admin
 * token, S3 and Stripe secrets, signing secrets, agent keys, OTLP headers), and a URL's
 * password is masked wherever a URL appears. Maps are shown as objects; functions left out.
 */
const SECRET_NAME = /(key|keys|secret|secrets|token|password|credentials|headers|authorization)$/i;
/** Names that end like a secret's but are not one. */
const NOT_SECRET = new Set(['keyId']);
export const REDACTED_VALUE = '[redacted]';

function maskUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  try {
    const url = new URL(text);
    if (!url.password) return text;
    url.password = 'redacted';
    return url.toString();
  } catch {
    return text;
  }
}

export function redactedConfig(value: unknown, name = ''): unknown {
  if (name !== '' && SECRET_NAME.test(name) && !NOT_SECRET.has(name) && value !== null && value !== undefined && typeof value !== 'boolean' && typeof value !== 'number') {
    return REDACTED_VALUE;
  }
  if (typeof value === 'string') return maskUrl(value);
  if (typeof value === 'function') return undefined;
  if (value instanceof Map) return redactedConfig(Object.fromEntries(value), name);
  if (value instanceof Set) return [...value].map((v) => redactedConfig(v));
  if (Array.isArray(value)) return value.map((v) => redactedConfig(v));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = redactedConfig(inner, key);
    return out;
  }
  return value;
}
