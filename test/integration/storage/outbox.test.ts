/**
 * The settlement outbox on SQLite and PostgreSQL: messages written in a usage record's
 * transaction (a record paid by an intermediary, which leaves the project's balance
 * alone), delivered once by the OutboxDeliverer to the handler of their target kind,
 * retried with backoff on the injected clock, dead after the last attempt and replayed,
 * never delivered twice by two deliverers sharing the database, and not lost when the
 * process dies between the commit and the delivery.
 */
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pgliteDatabase, postgresReachable, postgresSchema, tempDir } from '../../helpers/databases.js';
import { databaseFromDialect, openDatabase, type Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { postgresDialect } from '../../../src/storage/db/postgres-dialect.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { OutboxRepository } from '../../../src/storage/db/repositories/outbox.repository.js';
import { BillingService } from '../../../src/domain/billing/billing.service.js';
import type { Principal } from '../../../src/domain/identity/caller.js';
import type { OutboxEntry, OutboxHandler } from '../../../src/domain/outbox/outbox.types.js';
import { AppError } from '../../../src/domain/shared/errors.js';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { OutboxDeliverer, type OutboxDelivererDeps } from '../../../src/worker/outbox-deliverer.js';

const T0 = 1_800_000_000_000;
const logger = pino({ level: 'silent' });

/** A clock only the test moves. */
class ManualClock {
  constructor(public now = T0) {}
  nowMs = () => this.now;
}

/** A database that several handles (two processes' connections) open, and reopen after a "crash". */
interface SharedDatabase {
  open(): Promise<Database>;
  drop(): Promise<void>;
}

interface SharedCase {
  name: string;
  /** A fresh database for one test. */
  create(): Promise<SharedDatabase>;
}

async function sharedDatabases(): Promise<SharedCase[]> {
  const sqlite = async (): Promise<SharedDatabase> => {
    const file = path.join(tempDir('sluice-outbox-'), 'sluice.db');
    return { open: async () => openDatabase({ kind: 'sqlite', path: file }), drop: async () => {} };
  };
  const postgres = async (): Promise<SharedDatabase> => {
    const schema = await postgresSchema();
    const open = async () => databaseFromDialect(postgresDialect(new pg.Pool({ connectionString: schema.url, max: 4 })), 'postgres');
    return { open, drop: schema.drop };
  };
  // PGlite is one in-process database: every "handle" is the same one, closed once at the end.
  const pglite = async (): Promise<SharedDatabase> => {
    const only = await pgliteDatabase();
    const handle = { ...only, close: async () => {} };
    return { open: async () => handle, drop: () => only.close() };
  };
  const real = await postgresReachable();
  return [
    { name: 'sqlite', create: sqlite },
    { name: real ? 'postgres' : 'postgres (pglite)', create: real ? postgres : pglite },
  ];
}

const cases = await sharedDatabases();

/** A handler that remembers what it was given; `fail` makes it throw. */
class RecordingHandler implements OutboxHandler {
  readonly delivered: OutboxEntry[] = [];
  fail: Error | null = null;
  async deliver(entry: OutboxEntry): Promise<void> {
    if (this.fail) throw this.fail;
    // Yield, so concurrent passes overlap with this delivery.
    await new Promise((resolve) => setImmediate(resolve));
    this.delivered.push(entry);
  }
}

function deliverer(database: Database, clock: ManualClock, handler: OutboxHandler, overrides: Partial<OutboxDelivererDeps> = {}) {
  return new OutboxDeliverer({
    store: new OutboxRepository(database),
    handlers: new Map([['intermediary', handler]]),
    clock,
    logger,
    maxAttempts: 3,
    retryBaseMs: 1_000,
    ...overrides,
  });
}

async function setup(database: Database, clock: ManualClock) {
  const projects = new ProjectsRepository(database);
  const project = await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000_000, createdAtMs: T0 });
  const billing = new BillingService(projects, new UsageRepository(database), () => ({ inputPerMillionUsd: 1, outputPerMillionUsd: 2 }), clock);
  const principal = (payer: Principal['payer']): Principal => ({ kind: 'gateway_agent', projectId: project.id, keyId: null, subject: 'agent-1', payer });
  /** Writes a call's usage record paid by the intermediary, with its settlement message. */
  const settleThroughIntermediary = async (requestId: string) => {
    const record = billing.usageRecord(principal({ kind: 'intermediary', intermediaryId: 'int_1' }), { model: 'm', route: '/v1/chat/completions', requestId, inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 100, outputTokens: 50, status: 200 });
    await billing.write(record, { outbox: [{ targetKind: 'intermediary', idempotencyKey: `usage:${record.id}`, payload: { request_id: requestId, cost_micros: record.costMicros } }] });
    return record;
  };
  return { projects, project, billing, principal, settleThroughIntermediary };
}

const stateOf = async (database: Database, id: string) => new OutboxRepository(database).find(id);
const entryIdOf = async (database: Database, key: string) =>
  (await database.db.selectFrom('outbox').select('id').where('idempotency_key', '=', key).executeTakeFirstOrThrow()).id;

describe.each(cases)('the settlement outbox on $name', ({ create }) => {
  let shared: SharedDatabase;
  const open = () => shared.open();
  beforeEach(async () => {
    shared = await create();
  });
  afterEach(async () => {
    await shared.drop();
  });

  it('an entry written with a usage record paid by an intermediary is delivered once; the project balance never moves', async () => {
    const database = await open();
    const clock = new ManualClock();
    try {
      await migrateToLatest(database);
      const { projects, project, billing, principal, settleThroughIntermediary } = await setup(database, clock);
      const record = await settleThroughIntermediary('req_1');
      expect(record.costMicros).toBe(200);
      const [stored] = (await new UsageRepository(database).listByProject(project.id, 10)).items;
      expect(stored).toEqual(record);
      expect(stored!.payer).toEqual({ kind: 'intermediary', id: 'int_1' });
      expect(await projects.balanceOf(project.id)).toBe(1_000_000);
      // The control: the same call paid by the project is debited.
      await billing.write(billing.usageRecord(principal({ kind: 'project', projectId: project.id }), { model: 'm', route: 'r', requestId: 'req_p', inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 100, outputTokens: 50, status: 200 }));
      expect(await projects.balanceOf(project.id)).toBe(1_000_000 - 200);

      const handler = new RecordingHandler();
      const worker = deliverer(database, clock, handler);
      expect(await worker.runOnce()).toEqual({ claimed: 1, delivered: 1, retried: 0, dead: 0, purged: 0 });
      expect(await worker.runOnce()).toEqual({ claimed: 0, delivered: 0, retried: 0, dead: 0, purged: 0 });
      expect(handler.delivered).toHaveLength(1);
      expect(handler.delivered[0]).toMatchObject({
        targetKind: 'intermediary',
        idempotencyKey: `usage:${record.id}`,
        payload: { request_id: 'req_1', cost_micros: 200 },
        attempts: 1,
      });
      const entry = await stateOf(database, handler.delivered[0]!.id);
      expect(entry).toMatchObject({ state: 'delivered', attempts: 1, deliveredAtMs: T0, lastError: null, createdAtMs: T0 });

      // Delivered entries are kept for the retention (7 days by default), then deleted; pending ones stay.
      const pending = await settleThroughIntermediary('req_later');
      clock.now = T0 + 7 * 86_400_000;
      handler.fail = new Error('down');
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1, purged: 0 });
      clock.now = T0 + 7 * 86_400_000 + 3_600_001;
      expect(await worker.runOnce()).toMatchObject({ purged: 1 });
      expect(await stateOf(database, entry!.id)).toBeUndefined();
      expect(await stateOf(database, await entryIdOf(database, `usage:${pending.id}`))).toMatchObject({ state: 'pending' });
    } finally {
      await database.close();
    }
  });

  it('a record and its messages commit together: concurrent writes share a commit, and one whose message cannot be written leaves no record', async () => {
    const database = await open();
    const clock = new ManualClock(T0 + 5_000_000);
    try {
      await migrateToLatest(database);
      const { project, billing, principal } = await setup(database, clock);
      const paidBy = principal({ kind: 'intermediary', intermediaryId: 'int_1' });
      const recordOf = (requestId: string) => billing.usageRecord(paidBy, { model: 'm', route: 'r', requestId, inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 1, outputTokens: 1, status: 200 });
      const message = (key: string) => ({ targetKind: 'intermediary', idempotencyKey: key, payload: { key } });
      // A message the database refuses (target_kind is NOT NULL): its insert fails after the record's.
      const unwritable = { targetKind: null as unknown as string, idempotencyKey: 'settle:bad', payload: {} };
      await billing.write(recordOf('req_first'), { outbox: [message('settle:first')] });
      // Three writes in one turn: the group commit fails on the refused message, and each is then written alone.
      const [a, bad, b] = [recordOf('req_a'), recordOf('req_bad'), recordOf('req_b')];
      const results = await Promise.allSettled([
        billing.write(a, { outbox: [message('settle:a')] }),
        billing.write(bad, { outbox: [unwritable] }),
        billing.write(b, { outbox: [message('settle:b1'), message('settle:b2')] }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const records = (await new UsageRepository(database).listByProject(project.id, 10)).items.map((r) => r.requestId);
      expect(records.sort()).toEqual(['req_a', 'req_b', 'req_first']);
      const keys = (await database.db.selectFrom('outbox').select('idempotency_key').execute()).map((r) => r.idempotency_key);
      expect(keys.sort()).toEqual(['settle:a', 'settle:b1', 'settle:b2', 'settle:first']);
    } finally {
      await database.close();
    }
  });

  it('a failing delivery is retried with backoff, goes dead after the last attempt, and a replay delivers it', async () => {
    const database = await open();
    const clock = new ManualClock(T0 + 10_000_000);
    try {
      await migrateToLatest(database);
      const { settleThroughIntermediary } = await setup(database, clock);
      const record = await settleThroughIntermediary('req_retry');
      const id = await entryIdOf(database, `usage:${record.id}`);
      const handler = new RecordingHandler();
      handler.fail = new AppError('upstream', 'intermediary answered 503');
      const outcomes: string[] = [];
      const worker = deliverer(database, clock, handler, { onOutcome: (kind, outcome) => outcomes.push(`${kind}:${outcome}`) });
      const start = clock.now;

      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
      let entry = (await stateOf(database, id))!;
      expect(entry).toMatchObject({ state: 'pending', attempts: 1, lastError: 'upstream: intermediary answered 503' });
      // First step 1 s, jittered to 50–100 %.
      expect(entry.nextAttemptAtMs).toBeGreaterThanOrEqual(start + 500);
      expect(entry.nextAttemptAtMs).toBeLessThanOrEqual(start + 1_000);
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 }); // not due yet

      clock.now = entry.nextAttemptAtMs;
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
      entry = (await stateOf(database, id))!;
      expect(entry.attempts).toBe(2);
      // Second step doubled: 2 s, jittered.
      expect(entry.nextAttemptAtMs - clock.now).toBeGreaterThanOrEqual(1_000);
      expect(entry.nextAttemptAtMs - clock.now).toBeLessThanOrEqual(2_000);

      clock.now = entry.nextAttemptAtMs;
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, dead: 1 });
      entry = (await stateOf(database, id))!;
      expect(entry).toMatchObject({ state: 'dead', attempts: 3, deliveredAtMs: null });
      clock.now += 86_400_000;
      expect(await worker.runOnce()).toMatchObject({ claimed: 0 }); // dead stays dead
      const outbox = new OutboxRepository(database);
      expect((await outbox.listDead(10)).items.map((e) => e.id)).toEqual([id]);
      expect(outcomes).toEqual(['intermediary:retry', 'intermediary:retry', 'intermediary:dead']);

      expect(await outbox.replay(id, clock.now)).toBe(true);
      expect(await outbox.replay(id, clock.now)).toBe(false); // only a dead entry is replayed
      expect(await stateOf(database, id)).toMatchObject({ state: 'pending', attempts: 0, lastError: null, nextAttemptAtMs: clock.now });
      handler.fail = null;
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(handler.delivered.map((e) => e.idempotencyKey)).toEqual([`usage:${record.id}`]);
      expect((await outbox.listDead(10)).items).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('an entry of a kind nobody handles is retried like a failure, never dropped', async () => {
    const database = await open();
    const clock = new ManualClock(T0 + 20_000_000);
    try {
      await migrateToLatest(database);
      const { settleThroughIntermediary } = await setup(database, clock);
      const record = await settleThroughIntermediary('req_nohandler');
      const worker = new OutboxDeliverer({ store: new OutboxRepository(database), handlers: new Map(), clock, logger, maxAttempts: 3 });
      expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
      const entry = await stateOf(database, await entryIdOf(database, `usage:${record.id}`));
      expect(entry).toMatchObject({ state: 'pending', lastError: 'no outbox handler is registered for target kind "intermediary"' });
    } finally {
      await database.close();
    }
  });

  it('stop() abandons a delivery under way without counting it against the message', async () => {
    const database = await open();
    const clock = new ManualClock(T0 + 25_000_000);
    try {
      await migrateToLatest(database);
      const { settleThroughIntermediary } = await setup(database, clock);
      const record = await settleThroughIntermediary('req_stop');
      let started!: () => void;
      const inFlight = new Promise<void>((resolve) => (started = resolve));
      const hanging: OutboxHandler = {
        deliver: (_entry, signal) =>
          new Promise((_resolve, reject) => {
            started();
            signal.addEventListener('abort', () => reject(signal.reason as Error));
          }),
      };
      // One attempt allowed: had the abort counted as a failure, the message would be dead.
      const worker = deliverer(database, clock, hanging, { maxAttempts: 1 });
      worker.start();
      await inFlight;
      await worker.stop();
      const entry = await stateOf(database, await entryIdOf(database, `usage:${record.id}`));
      expect(entry).toMatchObject({ state: 'pending', attempts: 1, lastError: null });
      // Its lease runs out, and a deliverer of another process sends it.
      clock.now += 60_001;
      const handler = new RecordingHandler();
      expect(await deliverer(database, clock, handler, { maxAttempts: 2 }).runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    } finally {
      await database.close();
    }
  });

  it('two deliverers on one database never deliver the same entry twice', async () => {
    const first = await open();
    const second = await open();
    const clock = new ManualClock(T0 + 30_000_000);
    try {
      await migrateToLatest(first);
      const { settleThroughIntermediary } = await setup(first, clock);
      const records = await Promise.all(Array.from({ length: 24 }, (_, i) => settleThroughIntermediary(`req_race_${i}`)));
      const handler = new RecordingHandler();
      const workers = [deliverer(first, clock, handler, { batchSize: 5 }), deliverer(second, clock, handler, { batchSize: 5 })];
      for (let round = 0; round < 20 && handler.delivered.length < records.length; round++) {
        await Promise.all(workers.map((w) => w.runOnce()));
      }
      const keys = handler.delivered.map((e) => e.idempotencyKey);
      expect(keys).toHaveLength(records.length);
      expect(new Set(keys)).toEqual(new Set(records.map((r) => `usage:${r.id}`)));
      const rows = await first.db.selectFrom('outbox').select(['state', 'attempts']).execute();
      expect(rows).toHaveLength(records.length);
      expect(rows.every((r) => r.state === 'delivered' && Number(r.attempts) === 1)).toBe(true);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('a crash between the commit and the delivery loses nothing: a fresh deliverer on the same database delivers it', async () => {
    const clock = new ManualClock(T0 + 40_000_000);
    const before = await open();
    await migrateToLatest(before);
    const { settleThroughIntermediary } = await setup(before, clock);
    const committed = await settleThroughIntermediary('req_crash_before');
    const claimed = await settleThroughIntermediary('req_crash_during');
    // A deliverer that claimed the second entry, then died with the process.
    const dying = await new OutboxRepository(before).claimDue('dead-process', clock.now, 60_000, 10);
    expect(dying).toHaveLength(2);
    await before.close();
    // The first entry was claimed too: put it back as never claimed, as if the process died right after the commit.
    const after = await open();
    try {
      await after.db.updateTable('outbox').set({ lease_owner: null, lease_expires_at: null, attempts: 0 }).where('idempotency_key', '=', `usage:${committed.id}`).execute();
      const handler = new RecordingHandler();
      const fresh = deliverer(after, clock, handler);
      expect(await fresh.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(handler.delivered.map((e) => e.idempotencyKey)).toEqual([`usage:${committed.id}`]);
      // The one whose deliverer died mid-delivery waits out that deliverer's lease, then goes with the same key.
      clock.now += 60_001;
      expect(await fresh.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
      expect(handler.delivered.map((e) => e.idempotencyKey)).toEqual([`usage:${committed.id}`, `usage:${claimed.id}`]);
      expect(handler.delivered[1]!.attempts).toBe(2);
    } finally {
      await after.close();
    }
  });
});
