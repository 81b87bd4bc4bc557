/**
 * What `logging.bodies: redacted` keeps of a body: the JSON with every credential taken
 * out, anywhere in it, message text included. Removed: the values of fields named like
 * credentials (`authorization`, `api_key`, `password`, `token`, …); the caller's own
 * credentials wherever they appear; and known secret shapes in any string: bearer tokens,
 * `Authorization:`/`x-api-key:` lines, API keys (`sk-…`, `sk-ant-…`, Sluice's
 * `sk-sluice-…`, AWS access key ids, GitHub tokens), JWTs, PEM private keys and card
 * numbers that pass the Luhn check.
 */
export const REDACTED = '[redacted]';

/** Field names (lower case, without `-` and `_`) whose values are credentials. */
const CREDENTIAL_FIELDS = new Set([
  'authorization', 'proxyauthorization', 'apikey', 'xapikey', 'password', 'passwd', 'secret', 'clientsecret', 'secretkey',
  'accesstoken', 'refreshtoken', 'idtoken', 'token', 'sessiontoken', 'cookie', 'setcookie', 'privatekey', 'credential',
  'credentials', 'auth', 'bearer', 'accesskey', 'awssecretaccesskey', 'xgoogapikey',
]);

const isCredentialField = (name: string): boolean => CREDENTIAL_FIELDS.has(name.toLowerCase().replace(/[-_]/g, ''));

const SECRET_SHAPES: readonly RegExp[] = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
  /\b(authorization|proxy-authorization|x-api-key|api[-_ ]?key)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic)\s+)?[^\s"',;]+/gi,
  /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
];

/** 13 to 19 digits, single spaces or dashes allowed between them. */
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** `text` with every secret shape, and each of `secrets` wherever it occurs, replaced by [redacted]. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join(REDACTED);
  for (const shape of SECRET_SHAPES) {
    out = out.replace(shape, (match, name?: string, between?: string) =>
      typeof name === 'string' && typeof between === 'string' && !match.toLowerCase().startsWith('bearer') ? `${name}${between}${REDACTED}` : REDACTED,
    );
  }
  return out.replace(CARD_CANDIDATE, (match) => (passesLuhn(match.replace(/[ -]/g, '')) ? REDACTED : match));
}

/** A copy of a JSON value with credentials removed (see the file's header); the value is not changed. */
export function redactJson(value: unknown, secrets: readonly string[] = []): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactJson(item, secrets));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    out[name] = isCredentialField(name) && field !== null && typeof field !== 'object' ? REDACTED : redactJson(field, secrets);
  }
  return out;
}
