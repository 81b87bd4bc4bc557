/**
 * `GET /admin/v1/gateway/settlements?state=dead` and `POST …/{id}/replay`: the usage
 * reports owed to the intermediary, and a way to send a dead letter again.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Container } from '../../../container.js';
import type { OutboxMessage } from '../../../domain/outbox/outbox.types.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { IdParams } from '../../schemas/admin.js';
import { SettlementList, SettlementObject, SettlementsQuery } from '../../schemas/gateway-admin.js';

export const settlementToWire = (m: OutboxMessage) => ({
  id: m.id,
  object: 'gateway.settlement' as const,
  state: m.state,
  idempotency_key: m.idempotencyKey,
  attempts: m.attempts,
  last_error: m.lastError,
  created_at: toUnixSeconds(m.createdAtMs),
  next_attempt_at: toUnixSeconds(m.nextAttemptAtMs),
  sent_at: m.sentAtMs === null ? null : toUnixSeconds(m.sentAtMs),
  events: (m.payload as { events: unknown[] }).events,
});

export function registerGatewaySettlementRoutes(plain: FastifyInstance, container: Container): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const { settlements } = container.gateway;
  const tags = ['admin'];
  const listSchema = { tags, querystring: SettlementsQuery, response: { 200: SettlementList } };
  scope.get('/gateway/settlements', { schema: listSchema, ...serializeAsBefore }, async (request) => {
    const page = await settlements.list(request.query.state ?? 'dead', readLimit(request.query.limit, 100, 20), request.query.after);
    return toListPage(page, settlementToWire);
  });
  const replaySchema = { tags, params: IdParams, response: { 200: SettlementObject } };
  scope.post('/gateway/settlements/:id/replay', { schema: replaySchema, ...serializeAsBefore }, async (request) =>
    settlementToWire(await settlements.replay(request.params.id)),
  );
}
