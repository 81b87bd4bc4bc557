/** The admin API's outbox routes: the settlement messages that went dead, and their replay. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { OutboxService } from '../../../domain/outbox/outbox.service.js';
import type { OutboxEntry } from '../../../domain/outbox/outbox.types.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { IdParams, OutboxList, OutboxMessage, UsageQuery } from '../../schemas/admin.js';

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

export function registerOutboxAdmin(plain: FastifyInstance, outbox: OutboxService, tags: string[]): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  scope.get('/outbox/dead', { schema: { tags, querystring: UsageQuery, response: { 200: OutboxList } }, ...serializeAsBefore }, async (request) =>
    toListPage(await outbox.listDead(readLimit(request.query.limit, 100, 20), request.query.after), outboxToWire),
  );

  scope.post('/outbox/:id/replay', { schema: { tags, params: IdParams, response: { 200: OutboxMessage } }, ...serializeAsBefore }, async (request) =>
    outboxToWire(await outbox.replay(request.params.id)),
  );
}
