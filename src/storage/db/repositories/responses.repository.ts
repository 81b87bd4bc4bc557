/**
 * Stored responses (the domain's ResponseStore) on SQLite or PostgreSQL. Every read names
 * the owner (project and subject) and skips rows past `expires_at`, so another tenant's
 * response and an expired one are equally not found, before and after the janitor
 * sweeps them.
 */
import type { Selectable } from 'kysely';
import type { Database, ResponsesTable } from '../database.js';
import type { Page } from '../../../domain/shared/pagination.js';
import type {
  BackgroundRequest,
  InputItemsQuery,
  NewStoredResponse,
  ResponseItem,
  ResponseOwner,
  ResponseStatus,
  ResponseStore,
  StoredResponse,
} from '../../../domain/responses/response-store.port.js';

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export const toStoredResponse = (row: Pick<Selectable<ResponsesTable>, 'id' | 'status' | 'background' | 'resource' | 'conversation' | 'created_at'>): StoredResponse => ({
  id: row.id,
  status: row.status as ResponseStatus,
  background: Number(row.background) === 1,
  resource: JSON.parse(row.resource) as Record<string, unknown>,
  conversation: parse<ResponseItem[]>(row.conversation),
  createdAtMs: Number(row.created_at),
});

export class ResponsesRepository implements ResponseStore {
  constructor(private readonly database: Database) {}

  async insert(response: NewStoredResponse, background?: BackgroundRequest): Promise<void> {
    await this.database.db
      .insertInto('responses')
      .values({
        id: response.id,
        project_id: response.owner.projectId,
        owner: response.owner.subject,
        status: response.status,
        background: background ? 1 : 0,
        resource: JSON.stringify(response.resource),
        input_items: JSON.stringify(response.inputItems),
        conversation: response.conversation === null ? null : JSON.stringify(response.conversation),
        created_at: response.createdAtMs,
        expires_at: response.expiresAtMs,
        request: background ? JSON.stringify(background.body) : null,
        prior_items: background ? JSON.stringify(background.priorItems) : null,
        key_id: background?.keyId ?? null,
        payer_kind: background?.payer.kind ?? null,
        payer_id: background?.payer.id ?? null,
        request_id: background?.requestId ?? null,
        // A foreground response is stored once it ended: nothing is left to bill.
        settled: background ? 0 : 1,
      })
      .execute();
  }

  #owned(owner: ResponseOwner, id: string, nowMs: number) {
    return this.database.db
      .selectFrom('responses')
      .where('id', '=', id)
      .where('project_id', '=', owner.projectId)
      .where('owner', '=', owner.subject)
      .where('expires_at', '>', nowMs);
  }

  async find(owner: ResponseOwner, id: string, nowMs: number): Promise<StoredResponse | undefined> {
    const row = await this.#owned(owner, id, nowMs).select(['id', 'status', 'background', 'resource', 'conversation', 'created_at']).executeTakeFirst();
    return row ? toStoredResponse(row) : undefined;
  }

  async inputItems(owner: ResponseOwner, id: string, query: InputItemsQuery, nowMs: number): Promise<Page<ResponseItem> | undefined> {
    const row = await this.#owned(owner, id, nowMs).select('input_items').executeTakeFirst();
    if (!row) return undefined;
    // One turn's input is bounded by the request body limit: paged in memory.
    const items = JSON.parse(row.input_items) as ResponseItem[];
    const ordered = query.order === 'asc' ? items : items.toReversed();
    const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
    if (start === 0 && query.after !== undefined) return { items: [], hasMore: false };
    const page = ordered.slice(start, start + query.limit);
    return { items: page, hasMore: start + query.limit < ordered.length };
  }

  async delete(owner: ResponseOwner, id: string, nowMs: number): Promise<boolean> {
    return this.database.db.transaction().execute(async (trx) => {
      const deleted = await trx
        .deleteFrom('responses')
        .where('id', '=', id)
        .where('project_id', '=', owner.projectId)
        .where('owner', '=', owner.subject)
        .where('expires_at', '>', nowMs)
        .executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) return false;
      await trx.deleteFrom('response_events').where('response_id', '=', id).execute();
      return true;
    });
  }

  async sweepExpired(nowMs: number, limit: number): Promise<number> {
    const expired = await this.database.db.selectFrom('responses').select('id').where('expires_at', '<=', nowMs).limit(limit).execute();
    if (expired.length === 0) return 0;
    const ids = expired.map((r) => r.id);
    return this.database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('response_events').where('response_id', 'in', ids).execute();
      const deleted = await trx.deleteFrom('responses').where('id', 'in', ids).where('expires_at', '<=', nowMs).executeTakeFirst();
      return Number(deleted.numDeletedRows);
    });
  }
}
