/**
 * The stored-response routes: GET /v1/responses/{id} (the object, or with stream=true a
 * background response's events from `starting_after`, then those still to come), DELETE,
 * GET …/input_items (a page of the turn's input) and POST …/cancel (background only).
 * Another tenant's id is 404 on every one.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { StoredResponsesAccess } from '../../../domain/responses/stored-access.js';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { principalOf } from '../../auth/caller-auth.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ResponseObject } from '../../../wire/responses/response.js';
import {
  InputItemList,
  InputItemsQuery,
  ResponseDeleted,
  ResponseEventStream,
  ResponseIdParams,
  RetrieveResponseQuery,
} from '../../schemas/stored-responses.js';
import { clientAbortSignal, sendSse } from '../../sse.js';

const tags = ['inference'];
const MAX_ITEMS_PAGE = 100;
const DEFAULT_ITEMS_PAGE = 20;

type Params = Static<typeof ResponseIdParams>;

/** `starting_after`: a sequence number (an integer of at least 0), or none. */
function readStartingAfter(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^\d{1,9}$/.test(raw)) throw invalidRequest('starting_after must be an integer of at least 0', 'starting_after');
  return Number(raw);
}

export function registerStoredResponsesRoutes(scope: FastifyInstance, { stored }: { stored: StoredResponsesAccess }): void {
  scope.get<{ Params: Params; Querystring: Static<typeof RetrieveResponseQuery> }>(
    '/responses/:response_id',
    {
      schema: {
        tags,
        summary: 'Retrieve a stored response; with stream=true, replay a background response\'s events and follow them',
        params: ResponseIdParams,
        querystring: RetrieveResponseQuery,
        description: `With stream=true the answer is text/event-stream: ${ResponseEventStream.description}.`,
        response: { 200: ResponseObject },
      },
      ...serializeAsBefore,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (request.query.stream !== 'true') return stored.retrieve(principal, request.params.response_id);
      const startingAfter = readStartingAfter(request.query.starting_after);
      const signal = clientAbortSignal(reply);
      return sendSse(reply, await stored.replay(principal, request.params.response_id, startingAfter, signal), signal, { named: true });
    },
  );

  scope.delete<{ Params: Params }>(
    '/responses/:response_id',
    { schema: { tags, summary: 'Delete a stored response', params: ResponseIdParams, response: { 200: ResponseDeleted } } },
    async (request) => stored.delete(principalOf(request), request.params.response_id),
  );

  scope.get<{ Params: Params; Querystring: Static<typeof InputItemsQuery> }>(
    '/responses/:response_id/input_items',
    { schema: { tags, summary: 'List the input items of a stored response', params: ResponseIdParams, querystring: InputItemsQuery, response: { 200: InputItemList } }, ...serializeAsBefore },
    async (request) => {
      const { after, order, limit } = request.query;
      const query = { after, order: order ?? 'desc', limit: readLimit(limit, MAX_ITEMS_PAGE, DEFAULT_ITEMS_PAGE) } as const;
      const page = await stored.inputItems(principalOf(request), request.params.response_id, query);
      return toListPage({ items: page.items.map((item) => ({ ...item, id: String(item.id) })), hasMore: page.hasMore }, (item) => item);
    },
  );

  scope.post<{ Params: Params }>(
    '/responses/:response_id/cancel',
    {
      schema: { tags, summary: 'Cancel a background response (400 for one that was not created with background: true)', params: ResponseIdParams, response: { 200: ResponseObject } },
      ...serializeAsBefore,
    },
    async (request) => stored.cancel(principalOf(request), request.params.response_id),
  );
}
