/** How long the authenticator keeps a key's lookup, with and without a revocation feed listening. */
import { describe, expect, it } from 'vitest';
import { ApiKeyAuthenticator, FEEDLESS_TTL_MS } from '../../src/domain/identity/authenticator.js';
import { generateApiKey } from '../../src/domain/identity/api-keys.js';
import type { ApiKeyRecord, ApiKeyStore } from '../../src/domain/identity/api-key.types.js';

const PROJECT = '0f4c3a52-8a0e-4f4e-9d3c-2f1b6a7e9c01';

/** A key store in memory that counts lookups (the database's part is tested in the integration suites). */
function keyStore(record: ApiKeyRecord) {
  const store = {
    lookups: 0,
    insert: async () => {},
    findByHash: async (hash: string) => (store.lookups++, hash === record.keyHash ? { ...record } : undefined),
    findById: async () => record,
    listByProject: async () => [record],
    revoke: async () => record,
    update: async () => record,
    rotate: async () => record,
  };
  return store satisfies ApiKeyStore & { lookups: number };
}

function setUp() {
  const { key, prefix, hash } = generateApiKey();
  const record: ApiKeyRecord = { id: 'key_1', projectId: PROJECT, name: 'k', prefix, keyHash: hash, createdAtMs: 0, revokedAtMs: null, policy: null, previousKeyHash: null, previousValidUntilMs: null };
  const store = keyStore(record);
  let now = 1_000_000;
  const clock = { nowMs: () => now };
  const authenticator = new ApiKeyAuthenticator(store, clock, 60_000);
  return { key, hash, record, store, authenticator, advance: (ms: number) => (now += ms) };
}

describe('ApiKeyAuthenticator cache', () => {
  it('without a feed listening, keeps a lookup at most FEEDLESS_TTL_MS, whatever the configured TTL', async () => {
    const { key, store, authenticator, advance } = setUp();
    await authenticator.authenticate(key, undefined);
    advance(FEEDLESS_TTL_MS - 1);
    expect(authenticator.authenticateCached(key, undefined)).toMatchObject({ projectId: PROJECT });
    advance(1);
    expect(authenticator.authenticateCached(key, undefined)).toBeUndefined();
    await authenticator.authenticate(key, undefined);
    expect(store.lookups).toBe(2);
  });

  it('with a feed listening, keeps it the configured TTL, and a revocation it announces drops it at once', async () => {
    const { key, hash, record, authenticator, advance } = setUp();
    authenticator.feedListening(true);
    await authenticator.authenticate(key, undefined);
    advance(59_999);
    expect(authenticator.authenticateCached(key, undefined)).toMatchObject({ projectId: PROJECT });
    record.revokedAtMs = 5;
    authenticator.forget(hash);
    expect(authenticator.authenticateCached(key, undefined)).toBeUndefined();
    await expect(authenticator.authenticate(key, undefined)).rejects.toMatchObject({ message: 'Invalid credentials' });
  });

  it('forgets everything when the feed is lost, then keeps lookups briefly until it listens again', async () => {
    const { key, authenticator, advance } = setUp();
    authenticator.feedListening(true);
    await authenticator.authenticate(key, undefined);
    authenticator.feedListening(false);
    expect(authenticator.authenticateCached(key, undefined)).toBeUndefined();
    await authenticator.authenticate(key, undefined);
    advance(FEEDLESS_TTL_MS);
    expect(authenticator.authenticateCached(key, undefined)).toBeUndefined();
  });

  it('does not keep a lookup that was under way when a revocation was announced', async () => {
    const { key, hash, authenticator } = setUp();
    authenticator.feedListening(true);
    const pending = authenticator.authenticate(key, undefined);
    authenticator.forget(hash); // announced while the lookup was reading
    await pending;
    expect(authenticator.authenticateCached(key, undefined)).toBeUndefined();
  });
});
