/**
 * The multi-replica proof for operators: `npx tsx deploy/prove-scale-out.ts [lines]`
 * (default 5,000). Starts 3 HTTP replicas and 2 batch workers of this checkout on the
 * PostgreSQL at SLUICE_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test;
 * a fresh schema, dropped afterwards), the Redis at REDIS_URL (default
 * redis://127.0.0.1:6379) and an s3rver bucket, behind a round-robin proxy; SIGKILLs one
 * replica and one worker mid-batch, restarts them, and checks that no line is lost,
 * duplicated or billed twice, that files, rate limits and key revocation are shared.
 * Exits 0 with a summary, or 1 with the failed check.
 */
import { SingleBar, Presets } from 'cli-progress';
import { proveScaleOut } from '../test/helpers/multi-replica-scenario.js';

const lines = Number(process.argv[2] ?? 5000);
if (!Number.isInteger(lines) || lines < 100) {
  console.error('usage: npx tsx deploy/prove-scale-out.ts [lines ≥ 100]');
  process.exit(64);
}
const steps = ['cluster up', 'killing', 'restarted'];
const bar = new SingleBar({ format: 'multi-replica proof [{bar}] {value}/{total} {step}' }, Presets.shades_classic);
bar.start(steps.length + 1, 0, { step: 'starting' });
try {
  const report = await proveScaleOut({
    lines,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    log: (line) => bar.increment({ step: line }),
  });
  bar.update(steps.length + 1, { step: 'checked' });
  bar.stop();
  process.stdout.write(`${JSON.stringify({ ok: true, ...report }, null, 2)}\n`);
} catch (err) {
  bar.stop();
  console.error(`multi-replica proof failed: ${(err as Error).message}`);
  process.exit(1);
}
