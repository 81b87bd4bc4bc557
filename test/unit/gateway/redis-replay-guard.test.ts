/** The shared replay store: the first remember() of a key wins, across clients, until its TTL. */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisReplayGuard } from '../../../src/storage/replay/redis-replay-guard.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';

const available = await redisReachable();
const prefix = `sluice-test:${randomUUID()}`;
const a = available ? new RedisReplayGuard(REDIS_URL, prefix) : null;
const b = available ? new RedisReplayGuard(REDIS_URL, prefix) : null;
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe.skipIf(!available)('RedisReplayGuard', () => {
  it('admits a key once across two clients and forgets it after the TTL', async () => {
    expect(await a!.remember('req:x', 1)).toBe(true);
    expect(await b!.remember('req:x', 1)).toBe(false);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await b!.remember('req:x', 1)).toBe(true);
  });
});
