/**
 * Combined outbox entries, on SQLite and PostgreSQL: the messages of one target kind that
 * one transaction writes become one entry where the kind's handler can combine them; an
 * entry the target refuses for good goes back as its parts (split), pending and due at
 * once with no attempts used, so only the part the target refuses dies.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import { kyselyQuery, type Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { OutboxRepository, outboxInsert } from '../../../src/storage/db/repositories/outbox.repository.js';
import { outboxEntriesOf, type DeliveryRefusal, type OutboxEntry, type OutboxHandler, type OutboxMessage } from '../../../src/domain/outbox/outbox.types.js';
import { OutboxDeliverer } from '../../../src/worker/outbox-deliverer.js';

const T0 = 1_800_000_000_000;
const logger = pino({ level: 'silent' });

type Keys = { keys: string[] };
const message = (...keys: string[]): OutboxMessage => ({ targetKind: 'report', idempotencyKey: keys[0]!, payload: { keys } satisfies Keys });

/** Combines messages by concatenating their keys; refuses for good any exchange that carries a key in `refused`. */
class CombiningHandler implements OutboxHandler {
  readonly exchanges: string[][] = [];
  readonly refused = new Set<string>();
  async deliver(entry: OutboxEntry): Promise<void | DeliveryRefusal> {
    const keys = (entry.payload as Keys).keys;
    this.exchanges.push(keys);
    return keys.some((key) => this.refused.has(key)) ? { kind: 'rejected', cause: 'status 422' } : undefined;
  }
  combine(messages: readonly OutboxMessage[]): OutboxMessage {
    return message(...messages.flatMap((m) => (m.payload as Keys).keys));
  }
  split(entry: OutboxEntry): OutboxMessage[] {
    return (entry.payload as Keys).keys.map((key) => message(key));
  }
}

describe('outbox entries of one transaction', () => {
  it('are one per target kind whose handler combines, in order, and one per message otherwise', () => {
    const handlers = new Map<string, OutboxHandler>([['report', new CombiningHandler()]]);
    const other: OutboxMessage = { targetKind: 'other', idempotencyKey: 'o', payload: null };
    const entries = outboxEntriesOf([message('a'), other, message('b'), other, message('c')], handlers, T0, { owner: 'me', expiresAtMs: T0 + 1 });
    expect(entries.map((e) => [e.targetKind, e.idempotencyKey, e.payload])).toEqual([
      ['report', 'a', { keys: ['a', 'b', 'c'] }],
      ['other', 'o', null],
      ['other', 'o', null],
    ]);
    expect(entries.every((e) => e.lease?.owner === 'me' && e.attempts === 1 && e.state === 'pending')).toBe(true);
    expect(outboxEntriesOf([message('a')], handlers, T0, null).map((e) => e.payload)).toEqual([{ keys: ['a'] }]);
    expect(outboxEntriesOf([], handlers, T0, null)).toEqual([]);
  });
});

describe.each(await dialectCases())('combined outbox entries on $name', ({ open }) => {
  let database: Database;
  let clock: { now: number; nowMs(): number };
  let handler: CombiningHandler;
  let store: OutboxRepository;
  let worker: OutboxDeliverer;

  beforeEach(async () => {
    database = await open();
    await migrateToLatest(database);
    clock = { now: T0, nowMs: () => clock.now };
    handler = new CombiningHandler();
    store = new OutboxRepository(database);
    worker = new OutboxDeliverer({ store, handlers: new Map([['report', handler]]), clock, logger, maxAttempts: 5, retryBaseMs: 1_000, random: () => 1 });
  });
  afterEach(async () => {
    await database.close();
  });

  const write = async (...messages: OutboxMessage[]) => {
    const entries = worker.entriesFor(messages, clock.now);
    await database.db.executeQuery(kyselyQuery(outboxInsert(database.db, entries)!));
  };
  const rows = async () =>
    (await database.db.selectFrom('outbox').select(['idempotency_key', 'payload', 'state', 'attempts', 'last_error']).orderBy('id').execute()).map((r) => ({
      key: r.idempotency_key,
      keys: (JSON.parse(r.payload) as Keys).keys,
      state: r.state,
      attempts: Number(r.attempts),
      error: r.last_error,
    }));

  it('writes one row for the lot and delivers it in one exchange', async () => {
    await write(message('a'), message('b'), message('c'));
    expect((await rows()).map((r) => [r.key, r.keys])).toEqual([['a', ['a', 'b', 'c']]]);
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1, dead: 0 });
    expect(handler.exchanges).toEqual([['a', 'b', 'c']]);
  });

  it('puts an entry refused for good back as its parts, and only the refused part dies', async () => {
    handler.refused.add('b');
    await write(message('a'), message('b'), message('c'));
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 0, retried: 1, dead: 0 });
    // The parts replace the combined entry: pending, due now, no attempt used.
    expect((await rows()).map((r) => [r.key, r.keys, r.state, r.attempts])).toEqual([
      ['a', ['a'], 'pending', 0],
      ['b', ['b'], 'pending', 0],
      ['c', ['c'], 'pending', 0],
    ]);
    expect(await worker.runOnce()).toMatchObject({ claimed: 3, delivered: 2, dead: 1 });
    expect((await rows()).map((r) => [r.key, r.state, r.attempts, r.error])).toEqual([
      ['a', 'delivered', 1, null],
      ['b', 'dead', 1, 'status 422'],
      ['c', 'delivered', 1, null],
    ]);
    expect(handler.exchanges).toEqual([['a', 'b', 'c'], ['a'], ['b'], ['c']]);
  });

  it('does not split an entry whose lease another deliverer holds', async () => {
    handler.refused.add('a');
    await write(message('a'), message('b'));
    const [entry] = await store.claimDue('someone-else', clock.now + 120_000, 60_000, 10);
    expect(await store.split(entry!.id, worker.workerId, [])).toBe(false);
    expect((await rows()).map((r) => r.keys)).toEqual([['a', 'b']]);
  });
});
