import type { Kysely } from 'kysely';

/**
 * Drops the outbox's unique index on (target_kind, idempotency_key). Every settled call
 * wrote one entry into it, and the keys are the intermediary's random request ids, so each
 * insert dirtied a random page of an index that only grows, most of the outbox row's
 * cost in a gateway call's usage transaction (measured in bench/RESULTS-archive.md, "Gateway").
 * Nothing looks entries up by key. A settlement is still written once: with its call's usage record, in the same
 * transaction; a key that repeats (an intermediary reusing a request id past the replay
 * window) is two calls, and the receiver's dedupe on the key is what it is for.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('outbox_idempotency_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('outbox_idempotency_idx').on('outbox').columns(['target_kind', 'idempotency_key']).unique().execute();
}
