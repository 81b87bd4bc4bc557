/**
 * Resolves a presented API key to its project. Lookups are cached so the hot path is not
 * a database round trip. A revocation is seen at once on the replica that revoked the key,
 * and on the others as soon as the revocation feed (PostgreSQL LISTEN/NOTIFY) tells them;
 * while no feed listens (SQLite, where another process such as the CLI may revoke, or a
 * lost connection) a lookup is kept at most FEEDLESS_TTL_MS, so a revoked key stops
 * working within a second everywhere.
 */
import { AppError, invalidRequest } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import type { Clock } from '../shared/clock.js';
import type { ApiKeyRecord, ApiKeyStore } from './api-key.types.js';
import { apiKeyPrincipal, type Principal } from './caller.js';
import { hashApiKey, hashesEqual } from './api-keys.js';

interface CacheEntry {
  record: ApiKeyRecord | null;
  expiresAtMs: number;
}

const MAX_CACHE_ENTRIES = 10_000;
/** Unknown keys are remembered only briefly, so a key created on another replica works quickly. */
const NEGATIVE_TTL_MS = 1_000;
/** The longest a lookup is kept while no revocation feed listens. */
export const FEEDLESS_TTL_MS = 1_000;

export const missingAuthentication = () =>
  new AppError('authentication', 'Missing authentication headers', { code: 'missing_api_key' });
export const invalidCredentials = () =>
  new AppError('permission', 'Invalid credentials', { code: 'invalid_api_key' });
export const expiredKey = () => new AppError('authentication', 'This API key has expired', { code: 'expired_api_key' });

export class ApiKeyAuthenticator {
  readonly #cache = new Map<string, CacheEntry>();
  /** A revocation feed is listening: lookups are kept the whole TTL. */
  #feedListening = false;
  /** Counts forgets: a lookup under way when one came may have read what it revoked, and is not kept. */
  #forgets = 0;

  constructor(
    private readonly keys: ApiKeyStore,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async authenticate(presentedKey: string | undefined, projectIdHeader: string | undefined): Promise<Principal> {
    const hash = this.#hashChecked(presentedKey, projectIdHeader);
    return this.#principal(await this.#lookup(hash), hash, projectIdHeader);
  }

  /**
   * The same answer as authenticate() without a promise when the key's lookup is cached
   * (the hot path); `undefined` when it is not, and the caller falls back to authenticate().
   * Throws exactly what authenticate() would reject with.
   */
  authenticateCached(presentedKey: string | undefined, projectIdHeader: string | undefined): Principal | undefined {
    const hash = this.#hashChecked(presentedKey, projectIdHeader);
    const cached = this.#cache.get(hash);
    if (!cached || cached.expiresAtMs <= this.clock.nowMs()) return undefined;
    return this.#principal(cached.record, hash, projectIdHeader);
  }

  #hashChecked(presentedKey: string | undefined, projectIdHeader: string | undefined): string {
    if (!presentedKey) throw missingAuthentication();
    if (projectIdHeader !== undefined && !isUuid(projectIdHeader)) {
      throw invalidRequest('x-project-id must be a UUID', 'x-project-id', 'invalid_project_id');
    }
    return hashApiKey(presentedKey);
  }

  #principal(record: ApiKeyRecord | null, hash: string, projectIdHeader: string | undefined): Principal {
    if (!record || record.revokedAtMs !== null || !this.#secretValid(record, hash)) throw invalidCredentials();
    if (projectIdHeader !== undefined && projectIdHeader.toLowerCase() !== record.projectId) throw invalidCredentials();
    const principal = apiKeyPrincipal(record.projectId, record.id);
    const { policy } = record;
    if (policy === null) return principal;
    if (policy.expiresAtMs !== undefined && policy.expiresAtMs <= this.clock.nowMs()) throw expiredKey();
    principal.policy = policy;
    return principal;
  }

  /** The key's current secret, or the one a rotation replaced while its grace lasts. */
  #secretValid(record: ApiKeyRecord, hash: string): boolean {
    if (hashesEqual(record.keyHash, hash)) return true;
    const { previousKeyHash, previousValidUntilMs } = record;
    return previousKeyHash !== null && previousValidUntilMs !== null && hashesEqual(previousKeyHash, hash) && previousValidUntilMs > this.clock.nowMs();
  }

  /** Drops a key from this replica's cache at once (after revocation here, or announced by the feed). */
  forget(keyHash: string): void {
    this.#forgets++;
    this.#cache.delete(keyHash);
  }

  /** The revocation feed is listening (true) or lost (false): either way what is cached may have missed one. */
  feedListening(listening: boolean): void {
    this.#feedListening = listening;
    this.#forgets++;
    this.#cache.clear();
  }

  clear(): void {
    this.#cache.clear();
  }

  async #lookup(hash: string): Promise<ApiKeyRecord | null> {
    const now = this.clock.nowMs();
    const cached = this.#cache.get(hash);
    if (cached && cached.expiresAtMs > now) return cached.record;
    const forgets = this.#forgets;
    const record = (await this.keys.findByHash(hash)) ?? null;
    if (this.ttlMs > 0 && forgets === this.#forgets) {
      const ttlMs = record && this.#feedListening ? this.ttlMs : Math.min(this.ttlMs, record ? FEEDLESS_TTL_MS : NEGATIVE_TTL_MS);
      if (this.#cache.size >= MAX_CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(hash, { record, expiresAtMs: now + ttlMs });
    }
    return record;
  }
}
