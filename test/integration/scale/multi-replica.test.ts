/**
 * Three HTTP replicas and two workers on one PostgreSQL, Redis and S3 bucket, with one of
 * each SIGKILLed mid-batch while chat load flows (test/helpers/multi-replica-scenario.ts).
 * The batch has 5,000 lines, the size the issue asks for, unless SLUICE_SCALE_TEST_LINES
 * says otherwise (e.g. 300 for a quick local run): 5,000 took about two minutes on a
 * loaded 2-core box, hence the generous timeout. deploy/prove-scale-out.ts runs the same
 * scenario for operators. Needs the real PostgreSQL and Redis (several processes share
 * them); skipped when either is absent, unless CI requires PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { postgresReachable } from '../../helpers/databases.js';
import { proveScaleOut } from '../../helpers/multi-replica-scenario.js';
import { REDIS_URL, redisReachable } from '../../helpers/redis.js';

const LINES = Number(process.env.SLUICE_SCALE_TEST_LINES ?? 5000);

describe('multi-replica deployment', () => {
  it(`survives a replica and a worker killed mid-batch (${LINES} lines): nothing lost, duplicated or double-billed; files, limits and revocation shared`, async (context) => {
    if (!(await postgresReachable()) || !(await redisReachable())) context.skip();
    const report = await proveScaleOut({ lines: LINES, redisUrl: REDIS_URL });
    expect(report).toMatchObject({ lines: LINES, completed: LINES, usageRecords: LINES, duplicates: 0, admittedOfTwiceTheLimit: 40 });
    expect(report.chat.okDuringKill).toBeGreaterThan(0);
    // The proxy spread requests over all three replicas.
    expect(report.servedByReplica.filter((n) => n > 0)).toHaveLength(3);
  }, 480_000);
});
