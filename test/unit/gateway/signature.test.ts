/**
 * The gateway signature against the committed vectors (test/vectors/gateway-signature.json):
 * a reference signer written here from the documented construction reproduces every v1, and
 * the verifier answers every vector's outcome, replay included.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayVerifier } from '../../../src/domain/gateway/gateway-verifier.js';
import { computeSignature, hmacKeyOf, parseSignatureHeader, verifySignature } from '../../../src/domain/gateway/signature.js';
import { MemoryReplayGuard } from '../../../src/storage/replay/memory-replay-guard.js';

interface Vector {
  name: string;
  secret: string;
  kid: string;
  t: string;
  now: number;
  method: string;
  pathWithQuery: string;
  bodyBase64: string;
  requestId: string | null;
  agentId: string | null;
  v1: string;
  header: string | null;
  verifierSecrets: Record<string, string>;
  outcome: string;
  repeat?: string;
}

const file = JSON.parse(readFileSync(new URL('../../vectors/gateway-signature.json', import.meta.url), 'utf8')) as {
  toleranceSeconds: number;
  vectors: Vector[];
};

/** The construction in docs/gateway.md, written independently of src: six fields joined by LF, body as bytes. */
function referenceSign(v: Vector): string {
  const message = Buffer.concat([
    Buffer.from([v.t, v.method, v.pathWithQuery].join('\n') + '\n'),
    Buffer.from(v.bodyBase64, 'base64'),
    Buffer.from('\n' + [v.requestId ?? '', v.agentId ?? ''].join('\n')),
  ]);
  return createHmac('sha256', Buffer.from(v.secret, 'utf8')).update(message).digest('hex');
}

const requestOf = (v: Vector) => ({
  method: v.method,
  pathWithQuery: v.pathWithQuery,
  body: Buffer.from(v.bodyBase64, 'base64'),
  requestId: v.requestId ?? undefined,
  agentId: v.agentId ?? undefined,
});

const verifierAt = (v: Vector) =>
  new GatewayVerifier({
    secrets: new Map(Object.entries(v.verifierSecrets)),
    toleranceSeconds: file.toleranceSeconds,
    replay: new MemoryReplayGuard({ nowMs: () => v.now * 1000 }),
    clock: { nowMs: () => v.now * 1000 },
  });

describe('gateway signature vectors', () => {
  it('covers every rejection reason and the worked examples of the reference', () => {
    const outcomes = new Set(file.vectors.flatMap((v) => [v.outcome, v.repeat]));
    for (const reason of ['valid', 'gateway_unconfigured', 'missing_or_malformed_signature', 'unknown_kid', 'stale_timestamp', 'invalid_signature', 'replayed']) {
      expect(outcomes).toContain(reason);
    }
    expect(file.vectors[0]!.v1).toBe('70515ce01789408a633298b6ca3ae515746fa3f8305e082cb8e6e81c8f8ce8b2');
    expect(file.vectors[1]!.v1).toBe('61899d4e2203afeac5cf886d8523ce9b5b675ab4ed085657324cf9edc4d34b46');
  });

  it.each(file.vectors.map((v) => [v.name, v] as const))('signer reproduces v1: %s', (_name, v) => {
    expect(referenceSign(v)).toBe(v.v1);
    expect(computeSignature(v.secret, v.t, requestOf(v))).toBe(v.v1);
  });

  it.each(file.vectors.map((v) => [v.name, v] as const))('verifier answers the outcome: %s', async (_name, v) => {
    const verifier = verifierAt(v);
    const first = await verifier.verify(v.header ?? undefined, requestOf(v));
    expect(first.ok ? 'valid' : first.reason).toBe(v.outcome);
    if (v.repeat) {
      const second = await verifier.verify(v.header ?? undefined, requestOf(v));
      expect(second.ok ? 'valid' : second.reason).toBe(v.repeat);
    }
  });
});

describe('gateway signature rules', () => {
  const v = file.vectors[0]!;
  const request = requestOf(v);
  const secrets = new Map([['k1', v.secret]]);
  const check = { secrets: new Map([['k1', hmacKeyOf(v.secret)]]), toleranceSeconds: 300, nowSeconds: v.now };

  it('its HMAC (prepared key, one-shot hashes) equals createHmac for keys of every length around the block size', () => {
    // Keys longer than SHA-256's 64-byte block are hashed first (RFC 2104); 0, 63, 64, 65 and
    // 200 bytes cover each branch, with bodies from empty to several blocks, and on both
    // sides of the 16 KiB up to which the message is assembled in a buffer kept between calls.
    for (const keyBytes of [0, 1, 32, 63, 64, 65, 200]) {
      for (const bodyBytes of [0, 1, 55, 64, 119, 1000, 16 * 1024 - 120, 16 * 1024, 40_000, 700]) {
        const secret = randomBytes(keyBytes).toString('hex').slice(0, keyBytes);
        const signed = { ...request, body: randomBytes(bodyBytes) };
        const reference = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${v.t}\nPOST\n${signed.pathWithQuery}\n`).update(signed.body);
        const expected = reference.update(`\n${signed.requestId ?? ''}\n${signed.agentId ?? ''}`).digest('hex');
        const outcome = verifySignature(`t=${v.t},kid=k1,v1=${expected}`, { ...signed, method: 'POST' }, { ...check, secrets: new Map([['k1', hmacKeyOf(secret)]]) });
        expect(outcome, `key ${keyBytes} bytes, body ${bodyBytes} bytes`).toEqual({ ok: true, kid: 'k1', t: v.t, matched: expected });
      }
    }
  });

  it('parses t, kid and every v1; ignores unknown keys', () => {
    const parsed = parseSignatureHeader(`t=1,kid=a,v1=${'a'.repeat(64)},x=y,v1=${'b'.repeat(64)}`);
    expect(parsed?.t).toBe('1');
    expect(parsed?.kid).toBe('a');
    expect(parsed?.v1.map((b) => b.toString('hex'))).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
  });

  it('reads the usual form (t, kid, v1, no spaces) as the general form with spaces and keys in another order', () => {
    const v1 = 'c'.repeat(64);
    const expected = { t: '1700000000', kid: 'k-2', v1: [Buffer.from(v1, 'hex')] };
    expect(parseSignatureHeader(`t=1700000000,kid=k-2,v1=${v1}`)).toEqual(expected);
    expect(parseSignatureHeader(` t=1700000000 , kid=k-2 , v1=${v1} `)).toEqual(expected);
    expect(parseSignatureHeader(`v1=${v1},kid=k-2,t=1700000000`)).toEqual(expected);
    expect(parseSignatureHeader(`t=1700000000,kid=k=2,v1=${v1}`)?.kid).toBe('k=2');
    expect(parseSignatureHeader(`t=1700000000,kid=k-2,v1=${v1.toUpperCase()}`)).toBeNull();
    expect(parseSignatureHeader(`t=1700000000,kid=k-2,kid=k-3,v1=${v1}`)).toBeNull();
  });

  it('refuses a t that is not 1–20 digits, and a non-hex v1', () => {
    expect(parseSignatureHeader(`t=,kid=a,v1=${'a'.repeat(64)}`)).toBeNull();
    expect(parseSignatureHeader(`t=-5,kid=a,v1=${'a'.repeat(64)}`)).toBeNull();
    expect(parseSignatureHeader(`t=1e9,kid=a,v1=${'a'.repeat(64)}`)).toBeNull();
    expect(parseSignatureHeader(`t=1,kid=a,v1=${'g'.repeat(64)}`)).toBeNull();
    expect(parseSignatureHeader(`t=${'9'.repeat(20)},kid=a,v1=${'a'.repeat(64)}`)?.t).toBe('9'.repeat(20));
  });

  it('a 20-digit t is parsed but stale', () => {
    const header = `t=${'9'.repeat(20)},kid=k1,v1=${v.v1}`;
    expect(verifySignature(header, request, check)).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it('a header of exactly 1 KiB is read, one byte more is not', () => {
    const core = `t=${v.t},kid=k1,v1=${v.v1},pad=`;
    const exact = core + 'x'.repeat(1024 - core.length);
    expect(verifySignature(exact, request, check).ok).toBe(true);
    expect(verifySignature(exact + 'x', request, check)).toEqual({ ok: false, reason: 'missing_or_malformed_signature' });
  });

  it('reports which v1 matched, for the replay key', () => {
    const header = `t=${v.t},kid=k1,v1=${'0'.repeat(64)},v1=${v.v1}`;
    expect(verifySignature(header, request, check)).toEqual({ ok: true, kid: 'k1', t: v.t, matched: v.v1 });
  });

  it('a replay store that cannot answer refuses (never fails open)', async () => {
    const verifier = new GatewayVerifier({
      secrets,
      toleranceSeconds: 300,
      replay: { remember: () => Promise.reject(new Error('down')) },
      clock: { nowMs: () => v.now * 1000 },
    });
    expect(await verifier.verify(`t=${v.t},kid=k1,v1=${v.v1}`, request)).toEqual({ ok: false, reason: 'replay_store_unavailable' });
  });

  it('records nothing for a request whose MAC fails, so it cannot burn a real request id', async () => {
    const replay = new MemoryReplayGuard({ nowMs: () => v.now * 1000 });
    const verifier = new GatewayVerifier({ secrets, toleranceSeconds: 300, replay, clock: { nowMs: () => v.now * 1000 } });
    const forged = await verifier.verify(`t=${v.t},kid=k1,v1=${'1'.repeat(64)}`, request);
    expect(forged).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(await verifier.verify(`t=${v.t},kid=k1,v1=${v.v1}`, request)).toEqual({ ok: true, kid: 'k1' });
  });

  it('a replayed request id is admitted again once twice the tolerance has passed', async () => {
    let now = v.now * 1000;
    const clock = { nowMs: () => now };
    const replay = new MemoryReplayGuard(clock);
    expect(replay.remember('req:a', 600)).toBe(true);
    now += 599_000;
    expect(replay.remember('req:a', 600)).toBe(false);
    now += 2_000;
    expect(replay.remember('req:a', 600)).toBe(true);
  });
});
