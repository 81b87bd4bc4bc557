/** The admin API's outbox routes: the settlement messages of every state, those that went dead, and their replay. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { OutboxService } from '../../../domain/outbox/outbox.service.js';
import { OUTBOX_STATES, type OutboxEntry } from '../../../domain/outbox/outbox.types.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { IdParams, OutboxList, OutboxListQuery, OutboxMessage, UsageQuery } from '../../schemas/admin.js';
import { readChoice } from '../../mappers/files-batches.js';

export const outboxToWire = (e: OutboxEntry) => ({
  id: e.id,
  object: 'outbox_message' as const,
  target_kind: e.targetKind,
  idempotency_key: e.idempotencyKey,
  payload: e.payload,
  state: e.state,
  attempts: e.attempts,
  last_error: e.lastError,
  next_attempt_at: toUnixSeconds(e.nextAttemptAtMs),
  created_at: toUnixSeconds(e.createdAtMs),
  delivered_at: e.deliveredAtMs === null ? null : toUnixSeconds(e.deliveredAtMs),
});

const tags = ['admin'];

export function registerOutboxAdmin(plain: FastifyInstance, { outbox }: { outbox: OutboxService }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  scope.get('/outbox', { schema: { tags, querystring: OutboxListQuery, response: { 200: OutboxList } }, ...serializeAsBefore }, async (request) => {
    const { state, target_kind: targetKind, limit, after } = request.query;
    const filter = { state: readChoice(state, OUTBOX_STATES, 'state', 'invalid_state'), targetKind };
    return toListPage(await outbox.list(filter, readLimit(limit, 100, 20), after), outboxToWire);
  });

  scope.get('/outbox/dead', { schema: { tags, querystring: UsageQuery, response: { 200: OutboxList } }, ...serializeAsBefore }, async (request) =>
    toListPage(await outbox.listDead(readLimit(request.query.limit, 100, 20), request.query.after), outboxToWire),
  );

  scope.post('/outbox/:id/replay', { schema: { tags, params: IdParams, response: { 200: OutboxMessage } }, ...serializeAsBefore }, async (request) =>
    outboxToWire(await outbox.replay(request.params.id)),
  );
}
