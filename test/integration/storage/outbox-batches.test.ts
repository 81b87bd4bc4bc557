/**
 * The outbox deliverer's batches, on SQLite and PostgreSQL: a target kind whose handler
 * has deliverMany gets a pass's entries in one exchange and they are marked delivered in
 * one UPDATE; a batch refused for good is tried entry by entry, so only the refused entry
 * dies (at once, without using up its attempts); a batch the target wants retried waits
 * for the target's Retry-After when that is later than the backoff; an entry whose lease
 * another deliverer took is not marked by the batch. Entries written leased to a running
 * deliverer are sent from memory, and those of a process that died are claimed once their
 * lease has run out.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { kyselyQuery, type Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { OutboxRepository, outboxInsert } from '../../../src/storage/db/repositories/outbox.repository.js';
import { newOutboxEntry, type DeliveryRefusal, type OutboxEntry, type OutboxHandler } from '../../../src/domain/outbox/outbox.types.js';
import { OutboxDeliverer } from '../../../src/worker/outbox-deliverer.js';

const T0 = 1_800_000_000_000;
const logger = pino({ level: 'silent' });

/** A handler that records each exchange; `refuse` decides an exchange's answer from its entries. */
class BatchHandler implements OutboxHandler {
  readonly single: string[] = [];
  readonly batches: string[][] = [];
  refuse: (keys: string[]) => DeliveryRefusal | undefined = () => undefined;
  async deliver(entry: OutboxEntry): Promise<void | DeliveryRefusal> {
    this.single.push(entry.idempotencyKey);
    return this.refuse([entry.idempotencyKey]);
  }
  async deliverMany(entries: readonly OutboxEntry[]): Promise<void | DeliveryRefusal> {
    const keys = entries.map((e) => e.idempotencyKey).sort();
    this.batches.push(keys);
    return this.refuse(keys);
  }
}

describe.each(await dialectCases())('outbox batches on $name', ({ open }) => {
  let database: Database;
  let clock: { now: number; nowMs(): number };
  let handler: BatchHandler;
  let store: OutboxRepository;

  beforeEach(async () => {
    database = await open();
    await migrateToLatest(database);
    clock = { now: T0, nowMs: () => clock.now };
    handler = new BatchHandler();
    store = new OutboxRepository(database);
  });
  afterEach(async () => {
    await database.close();
  });

  const enqueue = async (...keys: string[]) => {
    const entries = keys.map((key) => newOutboxEntry({ targetKind: 'intermediary', idempotencyKey: key, payload: { key } }, clock.now));
    await database.db.executeQuery(kyselyQuery(outboxInsert(database.db, entries)!));
    return entries.map((e) => e.id);
  };
  const deliverer = (owner?: string) => {
    const worker = new OutboxDeliverer({ store, handlers: new Map([['intermediary', handler]]), clock, logger, maxAttempts: 5, retryBaseMs: 1_000, random: () => 1 });
    if (owner) Object.defineProperty(worker, 'workerId', { value: owner });
    return worker;
  };
  const states = async () =>
    Object.fromEntries(
      (await database.db.selectFrom('outbox').select(['idempotency_key', 'state', 'attempts', 'next_attempt_at', 'last_error']).execute()).map((r) => [
        r.idempotency_key,
        { state: r.state, attempts: Number(r.attempts), dueIn: Number(r.next_attempt_at) - T0, error: r.last_error },
      ]),
    );

  it('delivers a pass’s entries of one kind in one exchange and marks them delivered together', async () => {
    await enqueue('a', 'b', 'c', 'd', 'e');
    expect(await deliverer().runOnce()).toEqual({ claimed: 5, delivered: 5, retried: 0, dead: 0, purged: 0 });
    expect(handler.batches).toEqual([['a', 'b', 'c', 'd', 'e']]);
    expect(handler.single).toEqual([]);
    const rows = await states();
    expect(Object.values(rows).map((r) => r.state)).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
    expect(await deliverer().runOnce()).toMatchObject({ claimed: 0 });
  });

  it('a batch refused for good is tried entry by entry: only the refused entry dies, at its first attempt', async () => {
    await enqueue('good-1', 'poison', 'good-2');
    handler.refuse = (keys) => (keys.includes('poison') ? { kind: 'rejected', cause: 'status 422' } : undefined);
    expect(await deliverer().runOnce()).toEqual({ claimed: 3, delivered: 2, retried: 0, dead: 1, purged: 0 });
    expect(handler.batches).toEqual([['good-1', 'good-2', 'poison']]);
    expect(handler.single.sort()).toEqual(['good-1', 'good-2', 'poison']);
    expect(await states()).toMatchObject({
      'good-1': { state: 'delivered', attempts: 1 },
      'good-2': { state: 'delivered', attempts: 1 },
      poison: { state: 'dead', attempts: 1, error: 'status 422' },
    });
  });

  it('a batch the target wants retried is retried whole, no sooner than its Retry-After', async () => {
    await enqueue('x', 'y');
    handler.refuse = () => ({ kind: 'retry', cause: 'status 503', retryAfterMs: 120_000 });
    expect(await deliverer().runOnce()).toEqual({ claimed: 2, delivered: 0, retried: 2, dead: 0, purged: 0 });
    expect(handler.single).toEqual([]);
    expect(await states()).toMatchObject({ x: { state: 'pending', attempts: 1, dueIn: 120_000 }, y: { state: 'pending', attempts: 1, dueIn: 120_000 } });
    // The backoff alone (1 s) would have sent them again by now.
    clock.now = T0 + 119_999;
    expect(await deliverer().runOnce()).toMatchObject({ claimed: 0 });
    clock.now = T0 + 120_000;
    handler.refuse = () => undefined;
    expect(await deliverer().runOnce()).toMatchObject({ claimed: 2, delivered: 2 });
    expect(handler.batches).toEqual([['x', 'y'], ['x', 'y']]);
  });

  it('a Retry-After shorter than the backoff leaves the backoff in charge', async () => {
    await enqueue('p', 'q');
    handler.refuse = () => ({ kind: 'retry', cause: 'status 429', retryAfterMs: 10 });
    await deliverer().runOnce();
    // random() = 1: the first step is the whole base delay.
    expect(await states()).toMatchObject({ p: { dueIn: 1_000 }, q: { dueIn: 1_000 } });
  });

  const enqueueLeased = async (owner: string, ...keys: string[]) => {
    const lease = { owner, expiresAtMs: clock.now + 60_000 };
    const entries = keys.map((key) => newOutboxEntry({ targetKind: 'intermediary', idempotencyKey: key, payload: { key } }, clock.now, lease));
    await database.db.executeQuery(kyselyQuery(outboxInsert(database.db, entries)!));
    return entries;
  };

  it('entries written leased to a running deliverer are sent from memory, with no claim', async () => {
    const worker = deliverer('owner-mine');
    const entries = await enqueueLeased('owner-mine', 'm1', 'm2', 'm3');
    worker.committed(entries);
    // Leased at the write, first attempt counted: no other deliverer can claim them meanwhile.
    expect(await store.claimDue('owner-other', clock.now, 60_000, 10)).toEqual([]);
    expect(await states()).toMatchObject({ m1: { state: 'pending', attempts: 1 }, m3: { state: 'pending', attempts: 1 } });
    expect(await worker.runOnce()).toEqual({ claimed: 3, delivered: 3, retried: 0, dead: 0, purged: 0 });
    expect(handler.batches).toEqual([['m1', 'm2', 'm3']]);
    expect(Object.values(await states()).map((r) => [r.state, r.attempts])).toEqual([['delivered', 1], ['delivered', 1], ['delivered', 1]]);
  });

  it('what a dead process leased is claimed by another deliverer once the lease has run out', async () => {
    await enqueueLeased('owner-dead', 'orphan');
    const survivor = deliverer('owner-alive');
    expect(await survivor.runOnce()).toMatchObject({ claimed: 0 });
    clock.now = T0 + 60_001;
    expect(await survivor.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await states()).toMatchObject({ orphan: { state: 'delivered', attempts: 2 } });
  });

  it('leases entries only while it runs', async () => {
    const worker = deliverer('owner-x');
    expect(worker.leaseFor(clock.now)).toBeNull();
    worker.start();
    expect(worker.leaseFor(clock.now)).toEqual({ owner: 'owner-x', expiresAtMs: clock.now + 60_000 });
    await worker.stop();
    expect(worker.leaseFor(clock.now)).toBeNull();
  });

  it('marks delivered only the entries the batch’s owner still holds', async () => {
    const [first, second] = await enqueue('held', 'lost');
    const claimed = await store.claimDue('owner-1', clock.now, 60_000, 10);
    expect(claimed.map((e) => e.id).sort()).toEqual([first, second].sort());
    // The lease on `lost` ran out and another deliverer took it.
    await database.db.updateTable('outbox').set({ lease_owner: 'owner-2' }).where('id', '=', second!).execute();
    expect(await store.markDeliveredMany([first!, second!], 'owner-1', clock.now)).toEqual([first]);
    expect(await states()).toMatchObject({ held: { state: 'delivered' }, lost: { state: 'pending' } });
  });
});
