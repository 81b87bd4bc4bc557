/**
 * The background-response queue (the domain's BackgroundQueue) on the `responses` rows.
 * A run is claimed as every lease table is (lease-claim.ts): of two workers racing for a
 * response exactly one gets it. A worker that dies stops renewing;
 * once its lease expires the response is claimable again, unsettled. Settling is the one
 * write that bills: it flips `settled` from 0 under the worker's lease, in the
 * transaction that writes the usage records, so a response is billed at most once.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, ResponsesTable, Tables } from '../database.js';
import type { UsageRepository } from './usage.repository.js';
import type {
  BackgroundJob,
  BackgroundQueue,
  ResponseItem,
  ResponseOwner,
  ResponseStatus,
  Settlement,
  StoredEvent,
} from '../../../domain/responses/response-store.port.js';
import { CLAIM_CANDIDATES, claimFirst } from './lease-claim.js';

export class BackgroundResponsesRepository implements BackgroundQueue {
  constructor(
    private readonly database: Database,
    private readonly usage: UsageRepository,
  ) {}

  async claim(worker: string, nowMs: number, leaseMs: number): Promise<BackgroundJob | undefined> {
    const candidates = await this.database.db
      .selectFrom('responses')
      .select('id')
      .where('settled', '=', 0)
      .where('background', '=', 1)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowMs)]))
      .orderBy('created_at')
      .limit(CLAIM_CANDIDATES)
      .execute();
    const row = await claimFirst(
      candidates.map((c) => c.id),
      (id) =>
        this.database.db
          .updateTable('responses')
          .set({ lease_owner: worker, lease_expires_at: nowMs + leaseMs, attempts: sql`attempts + 1` })
          .where('id', '=', id)
          .where('settled', '=', 0)
          .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowMs)]))
          .returningAll()
          .executeTakeFirst(),
    );
    return row && toBackgroundJob(row);
  }

  async renew(worker: string, ids: readonly string[], nowMs: number, leaseMs: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.database.db
      .updateTable('responses')
      .set({ lease_expires_at: nowMs + leaseMs })
      .where('id', 'in', [...ids])
      .where('lease_owner', '=', worker)
      .where('settled', '=', 0)
      .returning(['id', 'status'])
      .execute();
    return new Set(rows.filter((r) => r.status === 'queued' || r.status === 'in_progress').map((r) => r.id));
  }

  async release(worker: string, id: string): Promise<void> {
    await this.database.db
      .updateTable('responses')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('lease_owner', '=', worker)
      .where('settled', '=', 0)
      .execute();
  }

  async append(worker: string, id: string, events: readonly StoredEvent[], resource: Record<string, unknown> | null, answerStarted: boolean): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const status = resource && typeof resource.status === 'string' ? resource.status : null;
      const updated = await trx
        .updateTable('responses')
        .set((eb) => ({
          event_count: eb('event_count', '+', events.length),
          ...(resource ? { resource: JSON.stringify(resource) } : {}),
          ...(status === 'in_progress' ? { status } : {}),
          ...(answerStarted ? { answer_started: 1 } : {}),
        }))
        .where('id', '=', id)
        .where('lease_owner', '=', worker)
        .where('settled', '=', 0)
        .where('status', 'in', ['queued', 'in_progress'])
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return false;
      await this.#insertEvents(trx, id, events);
      return true;
    });
  }

  async settle(worker: string, id: string, settlement: Settlement): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('responses')
        .set({ settled: 1, lease_owner: null, lease_expires_at: null })
        .where('id', '=', id)
        .where('lease_owner', '=', worker)
        .where('settled', '=', 0)
        .returning(['status'])
        .executeTakeFirst();
      if (!row) return false;
      const { resource, conversation } = settlement;
      if (row.status !== 'cancelled') {
        await trx
          .updateTable('responses')
          .set({
            status: String(resource.status),
            resource: JSON.stringify(resource),
            conversation: conversation === null ? null : JSON.stringify(conversation),
          })
          .where('id', '=', id)
          .execute();
        await this.#insertEvents(trx, id, settlement.events);
      }
      await this.usage.recordAndDebitIn(trx, settlement.usage, settlement.outbox);
      return true;
    });
  }

  async #insertEvents(trx: Kysely<Tables>, id: string, events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    await trx
      .insertInto('response_events')
      .values(events.map((e) => ({ response_id: id, seq: e.seq, event: JSON.stringify(e.event) })))
      .onConflict((oc) => oc.columns(['response_id', 'seq']).doNothing())
      .execute();
  }

  async cancel(owner: ResponseOwner, id: string, nowMs: number): Promise<{ resource: Record<string, unknown>; running: boolean } | undefined> {
    return this.database.db.transaction().execute(async (trx) => {
      // The write comes first, so SQLite takes its write lock at once. A response no worker
      // holds is settled here (nothing ran, nothing to bill); a running one by its worker.
      const row = await trx
        .updateTable('responses')
        .set({
          status: 'cancelled',
          settled: sql<number>`case when lease_owner is null or lease_expires_at < ${nowMs} then 1 else 0 end`,
        })
        .where('id', '=', id)
        .where('project_id', '=', owner.projectId)
        .where('owner', '=', owner.subject)
        .where('expires_at', '>', nowMs)
        .where('background', '=', 1)
        .where('settled', '=', 0)
        .where('status', 'in', ['queued', 'in_progress'])
        .returning(['resource', 'prior_items', 'input_items', 'settled'])
        .executeTakeFirst();
      if (!row) return undefined;
      const resource = { ...(JSON.parse(row.resource) as Record<string, unknown>), status: 'cancelled' };
      // A continuation from a cancelled response has the turns before it and its input.
      const conversation = [...(JSON.parse(row.prior_items ?? '[]') as unknown[]), ...(JSON.parse(row.input_items) as unknown[])];
      await trx
        .updateTable('responses')
        .set({ resource: JSON.stringify(resource), conversation: JSON.stringify(conversation) })
        .where('id', '=', id)
        .execute();
      return { resource, running: Number(row.settled) === 0 };
    });
  }

  async eventsAfter(id: string, after: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.database.db
      .selectFrom('response_events')
      .select(['seq', 'event'])
      .where('response_id', '=', id)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ seq: Number(r.seq), event: JSON.parse(r.event) as Record<string, unknown> }));
  }

  async progress(id: string): Promise<{ status: ResponseStatus; settled: boolean } | undefined> {
    const row = await this.database.db.selectFrom('responses').select(['status', 'settled']).where('id', '=', id).executeTakeFirst();
    return row ? { status: row.status as ResponseStatus, settled: Number(row.settled) === 1 } : undefined;
  }
}

function toBackgroundJob(row: Selectable<ResponsesTable>): BackgroundJob {
  return {
    id: row.id,
    owner: { projectId: row.project_id, subject: row.owner },
    status: row.status as ResponseStatus,
    body: JSON.parse(row.request ?? '{}') as Record<string, unknown>,
    priorItems: JSON.parse(row.prior_items ?? '[]') as ResponseItem[],
    inputItems: JSON.parse(row.input_items) as ResponseItem[],
    resource: JSON.parse(row.resource) as Record<string, unknown>,
    keyId: row.key_id,
    payer: { kind: (row.payer_kind ?? 'project') as BackgroundJob['payer']['kind'], id: row.payer_id ?? row.project_id },
    requestId: row.request_id ?? row.id,
    attempt: Number(row.attempts),
    eventCount: Number(row.event_count),
    answerStarted: Number(row.answer_started) === 1,
  };
}
