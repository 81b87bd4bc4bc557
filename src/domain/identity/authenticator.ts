/**
 * Resolves a presented API key to its project. Lookups are cached for a short TTL so
 * the hot path is not a database round trip; revocation is visible within that TTL on
 * every replica, and at once on the replica that revoked the key.
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

export const missingAuthentication = () =>
  new AppError('authentication', 'Missing authentication headers', { code: 'missing_api_key' });
export const invalidCredentials = () =>
  new AppError('permission', 'Invalid credentials', { code: 'invalid_api_key' });

export class ApiKeyAuthenticator {
  readonly #cache = new Map<string, CacheEntry>();

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
    if (!record || !hashesEqual(record.keyHash, hash) || record.revokedAtMs !== null) throw invalidCredentials();
    if (projectIdHeader !== undefined && projectIdHeader.toLowerCase() !== record.projectId) throw invalidCredentials();
    return apiKeyPrincipal(record.projectId, record.id);
  }

  /** Drops a key from this replica's cache at once (after revocation here). */
  forget(keyHash: string): void {
    this.#cache.delete(keyHash);
  }

  clear(): void {
    this.#cache.clear();
  }

  async #lookup(hash: string): Promise<ApiKeyRecord | null> {
    const now = this.clock.nowMs();
    const cached = this.#cache.get(hash);
    if (cached && cached.expiresAtMs > now) return cached.record;
    const record = (await this.keys.findByHash(hash)) ?? null;
    if (this.ttlMs > 0) {
      if (this.#cache.size >= MAX_CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(hash, { record, expiresAtMs: now + (record ? this.ttlMs : Math.min(this.ttlMs, NEGATIVE_TTL_MS)) });
    }
    return record;
  }
}
