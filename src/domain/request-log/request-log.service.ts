/**
 * Reading the request log: the list's filters read from a query (every bad value a 400
 * naming its parameter), one call by id, its body, a session's calls, and the export's
 * walk over every matching call. `projectId` null reads across projects (operators); a
 * project's reader never sees another project's call: it is not found.
 */
import type { Readable } from 'node:stream';
import type { BlobStore } from '../files/blob-store.port.js';
import { AppError, invalidRequest, notFound } from '../shared/errors.js';
import { usdToMicros } from '../shared/money.js';
import type { Page } from '../shared/pagination.js';
import type { RequestLogStore } from './request-log.port.js';
import type { BodyMode, LoggingSettings, RequestLogEntry, RequestLogFilter, RequestSession } from './request-log.types.js';

/** The list's query parameters as they arrive (strings, each optional). */
export interface RequestLogQuery {
  key_id?: string;
  model?: string;
  status?: string;
  tag?: string;
  session_id?: string;
  since?: string;
  until?: string;
  min_cost_usd?: string;
}

export interface RequestBodyView {
  id: string;
  mode: Exclude<BodyMode, 'off'>;
  request: unknown;
  response: unknown;
  truncated: boolean;
}

/** A session shows at most this many calls (its sums count them all). */
export const SESSION_CALLS = 1_000;

const NAME = /^[\w.:/@+=-]{1,256}$/;
const SECONDS = /^\d{1,11}$/;
const STATUS = /^[1-5]\d\d$/;
const USD = /^\d{1,9}(\.\d{1,6})?$/;
export const REQUEST_ID = /^[\w.-]{1,128}$/;

const named = (value: string | undefined, param: string): string | undefined => {
  if (value === undefined) return undefined;
  if (!NAME.test(value)) throw invalidRequest(`${param} must be 1 to 256 letters, digits or _ . : / @ + = -`, param);
  return value;
};

const seconds = (value: string | undefined, param: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!SECONDS.test(value)) throw invalidRequest(`${param} must be a time in unix seconds (a non-negative integer)`, param);
  return Number(value) * 1000;
};

/** The filter of a list query over `projectId`'s calls (null: every project's). */
export function readRequestLogFilter(query: RequestLogQuery, projectId: string | null): RequestLogFilter {
  const filter: RequestLogFilter = { projectId };
  const keyId = named(query.key_id, 'key_id');
  if (keyId !== undefined) filter.keyId = keyId;
  const model = named(query.model, 'model');
  if (model !== undefined) filter.model = model;
  const tag = named(query.tag, 'tag');
  if (tag !== undefined) filter.tag = tag;
  const sessionId = named(query.session_id, 'session_id');
  if (sessionId !== undefined) filter.sessionId = sessionId;
  if (query.status !== undefined) {
    if (query.status === 'error') filter.status = 'error';
    else if (STATUS.test(query.status)) filter.status = Number(query.status);
    else throw invalidRequest('status must be an HTTP status (100 to 599) or error', 'status');
  }
  const since = seconds(query.since, 'since');
  if (since !== undefined) filter.sinceMs = since;
  const until = seconds(query.until, 'until');
  if (until !== undefined) filter.untilMs = until;
  if (since !== undefined && until !== undefined && since > until) throw invalidRequest('since must not be after until', 'since');
  if (query.min_cost_usd !== undefined) {
    if (!USD.test(query.min_cost_usd)) throw invalidRequest('min_cost_usd must be a non-negative amount in dollars (up to 6 decimals)', 'min_cost_usd');
    filter.minCostMicros = usdToMicros(Number(query.min_cost_usd));
  }
  return filter;
}

export const requestNotFound = (id: string) => notFound(`No request found with id '${id}'`, 'request_not_found', 'request_id');
const bodyNotFound = (id: string) => notFound(`No body was logged for request '${id}'`, 'body_not_found', 'request_id');
const sessionNotFound = (id: string) => notFound(`No session found with id '${id}'`, 'session_not_found', 'session_id');
const invalidCursor = () => new AppError('invalid_request', 'after must be the id of a request in this list', { code: 'invalid_cursor', param: 'after' });

export class RequestLogService {
  constructor(
    private readonly store: RequestLogStore,
    private readonly blobs: BlobStore,
  ) {}

  async list(filter: RequestLogFilter, limit: number, after: string | undefined): Promise<Page<RequestLogEntry>> {
    if (after !== undefined && !REQUEST_ID.test(after)) throw invalidCursor();
    const page = await this.store.list(filter, limit, after ?? null);
    if (page === null) throw invalidCursor();
    return page;
  }

  async get(id: string, projectId: string | null): Promise<RequestLogEntry> {
    const entry = REQUEST_ID.test(id) ? await this.store.get(id, projectId) : null;
    if (!entry) throw requestNotFound(id);
    return entry;
  }

  async body(id: string, projectId: string | null): Promise<RequestBodyView> {
    const stored = REQUEST_ID.test(id) ? await this.store.body(id, projectId) : null;
    if (!stored) {
      await this.get(id, projectId);
      throw bodyNotFound(id);
    }
    let { request, response } = stored;
    if (stored.blobKey !== null) ({ request, response } = JSON.parse(await readAll(await this.blobs.get(stored.blobKey))) as { request: string; response: string });
    return { id, mode: stored.mode, request: parsedOrText(request), response: parsedOrText(response), truncated: stored.truncated };
  }

  async session(id: string, projectId: string | null): Promise<RequestSession> {
    const session = id.length <= 256 ? await this.store.session(id, projectId, SESSION_CALLS) : null;
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /** Every call matching `filter`, newest first, a page at a time (the export: nothing held but one page). */
  async *walk(filter: RequestLogFilter, pageSize = 500): AsyncGenerator<RequestLogEntry> {
    let after: string | null = null;
    for (;;) {
      const page: Page<RequestLogEntry> | null = await this.store.list(filter, pageSize, after);
      if (!page) return;
      yield* page.items;
      if (!page.hasMore || page.items.length === 0) return;
      after = page.items[page.items.length - 1]!.id;
    }
  }

  settings(): Promise<Map<string, LoggingSettings>> {
    return this.store.settings();
  }

  saveSettings(projectId: string, settings: LoggingSettings): Promise<void> {
    return this.store.saveSettings(projectId, settings);
  }
}

/** Cut JSON is kept as the text it is. */
function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}
