/** The admin API's gateway settlements (usage reports in the outbox): query and wire objects. */
import { Type } from '@sinclair/typebox';

export const SettlementsQuery = Type.Object({
  state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('dead')], { description: 'default dead' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'a settlement id: the `last_id` of the previous page' })),
});

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const SettlementObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('gateway.settlement'),
  state: Type.String({ description: 'pending, sent or dead' }),
  idempotency_key: Type.String({ description: 'the call: <gw-request-id> (each event adds :<meter>)' }),
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  created_at: Type.Integer({ description: 'Unix seconds' }),
  next_attempt_at: Type.Integer({ description: 'Unix seconds' }),
  sent_at: Nullable(Type.Integer({ description: 'Unix seconds' })),
  events: Type.Array(Type.Unknown(), { description: 'the usage events of the call as reported to the intermediary, one per meter' }),
});

export const SettlementList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(SettlementObject),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
  has_more: Type.Boolean(),
});
