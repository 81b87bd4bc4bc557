/**
 * Shard leases, claimed as every lease table is (lease-claim.ts). Leases are renewed while a worker holds
 * the shard; a worker that dies simply stops renewing and the shard is claimable again.
 */
import { sql, type Selectable } from 'kysely';
import type { BatchShardsTable, Database } from '../database.js';
import type { Shard } from '../../../domain/batches/batch.types.js';
import type { BatchShardStore } from '../../../domain/batches/batch-stores.port.js';
import { CLAIM_CANDIDATES, claimFirst } from './lease-claim.js';

const toShard = (row: Selectable<BatchShardsTable>): Shard => ({
  id: row.id,
  batchId: row.batch_id,
  shardNo: Number(row.shard_no),
  firstLine: Number(row.first_line),
  lastLine: Number(row.last_line),
  startByte: Number(row.start_byte),
  endByte: Number(row.end_byte),
  lineCount: Number(row.line_count),
});

/** Statuses whose pending shards are worth running (cancelled/expired lines are written by the runner too). */
const RUNNABLE = ['validating', 'in_progress', 'cancelling'];

export class BatchShardsRepository implements BatchShardStore {
  constructor(private readonly database: Database) {}

  /** Claims one pending, unleased shard (oldest batch first), or returns undefined. */
  async claim(owner: string, nowMs: number, leaseMs: number): Promise<Shard | undefined> {
    const candidates = await this.database.db
      .selectFrom('batch_shards as s')
      .innerJoin('batches as b', 'b.id', 's.batch_id')
      .select('s.id')
      .where('s.state', '=', 'pending')
      .where((eb) => eb.or([eb('s.lease_expires_at', 'is', null), eb('s.lease_expires_at', '<', nowMs)]))
      .where('b.status', 'in', RUNNABLE)
      .orderBy('s.batch_id')
      .orderBy('s.shard_no')
      .limit(CLAIM_CANDIDATES)
      .execute();
    const row = await claimFirst(
      candidates.map((c) => c.id),
      (id) =>
        this.database.db
          .updateTable('batch_shards')
          .set({ lease_owner: owner, lease_expires_at: nowMs + leaseMs, claims: sql`claims + 1` })
          .where('id', '=', id)
          .where('state', '=', 'pending')
          .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowMs)]))
          .returningAll()
          .executeTakeFirst(),
    );
    return row && toShard(row);
  }

  /** Extends the leases this owner still holds; returns the ids it still holds. */
  async renew(owner: string, ids: readonly string[], nowMs: number, leaseMs: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.database.db
      .updateTable('batch_shards')
      .set({ lease_expires_at: nowMs + leaseMs })
      .where('id', 'in', [...ids])
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .returning('id')
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Gives a shard back at once (drain, or lines left undone) so another worker can take it. */
  async release(owner: string, id: string): Promise<void> {
    await this.database.db
      .updateTable('batch_shards')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .execute();
  }

  /** Every line of the shard has its result. Idempotent, whoever holds the lease. */
  async markDone(id: string): Promise<void> {
    await this.database.db
      .updateTable('batch_shards')
      .set({ state: 'done', lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .execute();
  }

  async claimsOf(batchId: string): Promise<{ shardNo: number; claims: number; state: string }[]> {
    const rows = await this.database.db
      .selectFrom('batch_shards')
      .select(['shard_no', 'claims', 'state'])
      .where('batch_id', '=', batchId)
      .orderBy('shard_no')
      .execute();
    return rows.map((r) => ({ shardNo: Number(r.shard_no), claims: Number(r.claims), state: r.state }));
  }
}
