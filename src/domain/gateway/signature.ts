/**
 * The gateway's wire signature (`gw-signature: t=<unix-seconds>,kid=<key-id>,v1=<hex>`):
 * strict, bounded header parsing, the signed message built as bytes, and the MAC check.
 * Own code: no library implements this header; the pieces it needs (SHA-256,
 * timingSafeEqual) are node:crypto's. The verifier's HMAC is RFC 2104 composed from two
 * one-shot `crypto.hash` calls over a key prepared once (HmacKey), rather than a
 * `createHmac` per request: that sets up three digest contexts and looks the algorithm up
 * on every call, which costs more than the hashing itself on this path (bench/RESULTS-archive.md,
 * Gateway). Tests check it against `createHmac` (test/unit/gateway/signature.test.ts).
 *
 * The signed message is six LF-joined fields: t, METHOD, path with query, the raw body
 * bytes, gw-request-id and gw-agent-id ("" when absent). Every field but the body is
 * LF-free, so the message is unambiguous; the body is never decoded and re-encoded.
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';

/** Why a request was refused; logged and counted, never sent to the client. */
export type RejectionReason =
  | 'gateway_unconfigured'
  | 'missing_or_malformed_signature'
  | 'unknown_kid'
  | 'stale_timestamp'
  | 'invalid_signature'
  | 'replayed';

export const MAX_SIGNATURE_HEADER_BYTES = 1024;

export interface ParsedSignature {
  /** The `t` digits, verbatim (they are signed as received). */
  t: string;
  kid: string;
  /** Each `v1` as its 32 bytes. */
  v1: Buffer[];
}

const T_DIGITS = /^\d{1,20}$/;
const V1_HEX = /^[0-9a-f]{64}$/;

/**
 * The form an intermediary sends (one t, kid and v1, in that order, no spaces): read with
 * one match. Anything else (spaces, more v1s, unknown keys, another order) takes the
 * general parse, which accepts everything this does, with the same result.
 */
const CANONICAL = /^t=(\d{1,20}),kid=([^,\s]+),v1=([0-9a-f]{64})$/;

/** The header's fields, or null when it is missing, too long or malformed. */
export function parseSignatureHeader(header: string | undefined): ParsedSignature | null {
  if (header === undefined || header.length === 0 || Buffer.byteLength(header, 'utf8') > MAX_SIGNATURE_HEADER_BYTES) return null;
  const canonical = CANONICAL.exec(header);
  if (canonical) return { t: canonical[1]!, kid: canonical[2]!, v1: [Buffer.from(canonical[3]!, 'hex')] };
  return parseFields(header);
}

function parseFields(header: string): ParsedSignature | null {
  let t: string | null = null;
  let kid: string | null = null;
  const v1: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== null || !T_DIGITS.test(value)) return null;
      t = value;
    } else if (key === 'kid') {
      if (kid !== null || value === '') return null;
      kid = value;
    } else if (key === 'v1') {
      if (!V1_HEX.test(value)) return null;
      v1.push(Buffer.from(value, 'hex'));
    }
    // Unknown keys are ignored (room for a future v2 beside v1).
  }
  if (t === null || kid === null || v1.length === 0) return null;
  return { t, kid, v1 };
}

export interface SignedRequest {
  method: string;
  /** The request-target exactly as received (Node's `req.url`). */
  pathWithQuery: string;
  body: Buffer;
  requestId: string | undefined;
  agentId: string | undefined;
}

/** Lower-case hex HMAC-SHA256 of the signed message under `secret` (what an intermediary sends as v1). */
export function computeSignature(secret: string, t: string, request: SignedRequest): string {
  return createHmac('sha256', secret)
    .update(signedHead(t, request), 'utf8')
    .update(request.body)
    .update(signedTail(request), 'utf8')
    .digest('hex');
}

/** The fields before the body, and after it; every one but the body is LF-free. */
const signedHead = (t: string, request: SignedRequest): string => `${t}\n${request.method}\n${request.pathWithQuery}\n`;
const signedTail = (request: SignedRequest): string => `\n${request.requestId ?? ''}\n${request.agentId ?? ''}`;

const SHA256_BLOCK_BYTES = 64;

/** A signing secret prepared for HMAC-SHA256 (RFC 2104): the key padded to one block, XOR ipad and XOR opad. */
export interface HmacKey {
  readonly inner: Buffer;
  readonly outer: Buffer;
}

export function hmacKeyOf(secret: string): HmacKey {
  let key: Buffer = Buffer.from(secret, 'utf8');
  if (key.length > SHA256_BLOCK_BYTES) key = hash('sha256', key, 'buffer');
  const inner = Buffer.alloc(SHA256_BLOCK_BYTES, 0x36);
  const outer = Buffer.alloc(SHA256_BLOCK_BYTES, 0x5c);
  for (let i = 0; i < key.length; i++) {
    inner[i]! ^= key[i]!;
    outer[i]! ^= key[i]!;
  }
  return { inner, outer };
}

/** Messages up to this size are assembled in one buffer kept between calls; larger ones in their own. */
const SCRATCH_BYTES = 16 * 1024;
/** Safe to share: macOf is synchronous, and what it returns is a fresh digest, never this buffer. */
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);

/**
 * HMAC-SHA256 over the six LF-joined fields: SHA256(outer ‖ SHA256(inner ‖ message)),
 * each block assembled in place rather than concatenated from pieces (it runs on every
 * gateway request, and the copies were most of its allocations).
 */
function macOf(key: HmacKey, t: string, request: SignedRequest): Buffer {
  const head = signedHead(t, request);
  const tail = signedTail(request);
  const size = SHA256_BLOCK_BYTES + Buffer.byteLength(head, 'utf8') + request.body.length + Buffer.byteLength(tail, 'utf8');
  const message = size <= SCRATCH_BYTES ? scratch : Buffer.allocUnsafe(size);
  key.inner.copy(message, 0);
  let at = SHA256_BLOCK_BYTES + message.write(head, SHA256_BLOCK_BYTES, 'utf8');
  at += request.body.copy(message, at);
  at += message.write(tail, at, 'utf8');
  const innerDigest = hash('sha256', message.subarray(0, at), 'buffer');
  key.outer.copy(scratch, 0);
  innerDigest.copy(scratch, SHA256_BLOCK_BYTES);
  return hash('sha256', scratch.subarray(0, SHA256_BLOCK_BYTES + innerDigest.length), 'buffer');
}

export interface SignatureCheck {
  /** Signing keys by kid, prepared once (hmacKeyOf), not per request. */
  secrets: ReadonlyMap<string, HmacKey>;
  toleranceSeconds: number;
  nowSeconds: number;
}

export type SignatureOutcome =
  | { ok: true; kid: string; t: string; matched: string }
  | { ok: false; reason: Exclude<RejectionReason, 'replayed'> };

/**
 * Checks the header against the request, in the documented order: configuration, header,
 * kid, timestamp (two-sided), MAC (any v1 may match; each compared in constant time).
 * Replay is the caller's next step, once the MAC verified.
 */
export function verifySignature(header: string | undefined, request: SignedRequest, check: SignatureCheck): SignatureOutcome {
  if (check.secrets.size === 0) return { ok: false, reason: 'gateway_unconfigured' };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'missing_or_malformed_signature' };
  const secret = check.secrets.get(parsed.kid);
  if (secret === undefined) return { ok: false, reason: 'unknown_kid' };
  // Number() of up to 20 digits may round, but only far outside any tolerance.
  if (Math.abs(check.nowSeconds - Number(parsed.t)) > check.toleranceSeconds) return { ok: false, reason: 'stale_timestamp' };
  const expected = macOf(secret, parsed.t, request);
  let matched: Buffer | null = null;
  // Every v1 is compared (no early exit), so timing says nothing about which one matched.
  for (const candidate of parsed.v1) {
    if (timingSafeEqual(candidate, expected) && matched === null) matched = candidate;
  }
  if (!matched) return { ok: false, reason: 'invalid_signature' };
  return { ok: true, kid: parsed.kid, t: parsed.t, matched: matched.toString('hex') };
}
