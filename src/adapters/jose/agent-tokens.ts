/**
 * Agent tokens: the RFC 7523 JWT-bearer grant (an assertion signed by a key registered
 * for the agent) exchanged for a short-lived access token signed by Sluice (EdDSA).
 * Sluice's signing key rotates every period; each period's key is derived from one
 * secret, so replicas sharing the secret agree without sharing state, and a token stays
 * verifiable through the period after the one that signed it.
 */
import { createHmac, createPrivateKey, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, errors, importJWK, jwtVerify, type JWK } from 'jose';
import type { Clock } from '../../domain/shared/clock.js';
import { AppError } from '../../domain/shared/errors.js';
import { invalidToken } from '../../domain/shared/storefront-errors.js';
import { JWT_BEARER, type AccessToken, type AgentTokenService } from '../../domain/storefront/agent-tokens.port.js';

const ROTATION_MS = 3_600_000;
/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const CACHE_LIMIT = 10_000;

export interface AgentTokensOptions {
  agentKeys: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  secret: string | null;
  ttlSeconds: number;
  clock: Clock;
}

const grantError = (error: string, description: string) =>
  new AppError('invalid_request', description, { code: error, challenge: { body: { error, error_description: description }, headers: { 'cache-control': 'no-store' } } });

export class AgentTokens implements AgentTokenService {
  readonly #agentKeys: Map<string, Readonly<Record<string, unknown>>>;
  readonly #secret: Buffer;
  readonly #periodKeys = new Map<number, { privateKey: KeyObject; publicKey: KeyObject }>();
  /** Assertion ids seen, until their expiry: an assertion is exchanged once. */
  readonly #seenJti = new Map<string, number>();
  /** Verified access tokens → agent and expiry, so each token's signature is checked once. */
  readonly #verified = new Map<string, { agentId: string; expMs: number }>();

  constructor(private readonly options: AgentTokensOptions) {
    this.#agentKeys = new Map(Object.entries(options.agentKeys));
    this.#secret = options.secret ? Buffer.from(options.secret) : randomBytes(32);
  }

  #keysOf(period: number) {
    let keys = this.#periodKeys.get(period);
    if (!keys) {
      const seed = createHmac('sha256', this.#secret).update(`sluice storefront access token key ${period}`).digest();
      const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: 'der', type: 'pkcs8' });
      keys = { privateKey, publicKey: createPublicKey(privateKey) };
      this.#periodKeys.set(period, keys);
      for (const old of this.#periodKeys.keys()) if (old < period - 1) this.#periodKeys.delete(old);
    }
    return keys;
  }

  /** The token exchange; `tokenUrl` is the assertion's audience, `audience` the access token's. */
  async exchange(form: Record<string, unknown>, tokenUrl: string, audience: string): Promise<AccessToken> {
    if (typeof form.grant_type !== 'string') throw grantError('invalid_request', 'grant_type is required');
    if (form.grant_type !== JWT_BEARER) throw grantError('unsupported_grant_type', `grant_type must be ${JWT_BEARER}`);
    if (typeof form.assertion !== 'string' || form.assertion === '') throw grantError('invalid_request', 'assertion is required (one JWT)');
    const agentId = await this.#verifyAssertion(form.assertion, tokenUrl);
    const nowMs = this.options.clock.nowMs();
    const period = Math.floor(nowMs / ROTATION_MS);
    const iat = Math.floor(nowMs / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', kid: `k${period}`, typ: 'at+jwt' })
      .setSubject(agentId)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.options.ttlSeconds)
      .sign(this.#keysOf(period).privateKey);
    return { access_token: token, token_type: 'Bearer', expires_in: this.options.ttlSeconds };
  }

  async #verifyAssertion(assertion: string, tokenUrl: string): Promise<string> {
    const nowMs = this.options.clock.nowMs();
    let issuer: unknown;
    try {
      issuer = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8')).iss;
    } catch {
      throw grantError('invalid_grant', 'assertion is not a JWT');
    }
    const jwk = typeof issuer === 'string' ? this.#agentKeys.get(issuer) : undefined;
    if (!jwk) throw grantError('invalid_grant', 'assertion issuer is not a registered agent');
    const agentId = issuer as string;
    let payload;
    try {
      const key = await importJWK(jwk as JWK, decodeProtectedHeader(assertion).alg);
      ({ payload } = await jwtVerify(assertion, key, {
        issuer: agentId,
        subject: agentId,
        audience: tokenUrl,
        algorithms: ['EdDSA', 'ES256'],
        maxTokenAge: '10m',
        clockTolerance: 30,
        requiredClaims: ['exp', 'sub', 'jti', 'iat'],
        currentDate: new Date(nowMs),
      }));
    } catch (err) {
      throw grantError('invalid_grant', `assertion rejected: ${(err as Error).message}`.slice(0, 200));
    }
    if (payload.exp! * 1000 > nowMs + 330_000) throw grantError('invalid_grant', 'assertion exp is more than 5 minutes ahead');
    for (const [jti, expMs] of this.#seenJti) if (expMs < nowMs) this.#seenJti.delete(jti);
    if (this.#seenJti.has(payload.jti!)) throw grantError('invalid_grant', 'assertion jti was already used');
    this.#seenJti.set(payload.jti!, payload.exp! * 1000 + 30_000);
    return agentId;
  }

  /** The agent an access token names, or invalid_token with the reason. */
  verify(token: string, audience: string): string | Promise<string> {
    const cached = this.#verified.get(`${audience} ${token}`);
    if (cached) {
      if (cached.expMs <= this.options.clock.nowMs()) throw invalidToken('token_expired', 'The access token has expired');
      return cached.agentId;
    }
    return this.#verifySigned(token, audience);
  }

  async #verifySigned(token: string, audience: string): Promise<string> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw invalidToken('token_invalid', 'The access token is not a JWT');
    }
    const period = /^k\d{1,12}$/.test(kid ?? '') ? Number(kid!.slice(1)) : NaN;
    const current = Math.floor(this.options.clock.nowMs() / ROTATION_MS);
    if (!(period === current || period === current - 1)) throw invalidToken('unrecognized_agent_credential', 'The access token was signed by a key this storefront does not hold');
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.#keysOf(period).publicKey, {
        audience,
        algorithms: ['EdDSA'],
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(this.options.clock.nowMs()),
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw invalidToken('token_expired', 'The access token has expired');
      throw invalidToken('token_invalid', 'The access token failed verification');
    }
    const agentId = payload.sub!;
    if (!this.#agentKeys.has(agentId)) throw invalidToken('unrecognized_agent_credential', 'The access token names an agent this storefront does not know');
    if (this.#verified.size >= CACHE_LIMIT) this.#verified.clear();
    this.#verified.set(`${audience} ${token}`, { agentId, expMs: payload.exp! * 1000 });
    return agentId;
  }
}
