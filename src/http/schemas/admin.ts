/** The admin API (`/admin/v1`): request bodies, params and query, and the wire objects of `routes/admin/mappers.ts`. */
import { Type, type TSchema } from '@sinclair/typebox';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const NameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const OptionalNameBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default "default"' })) },
  { additionalProperties: false, description: 'may be omitted entirely' },
);
export const CreditsBody = Type.Object(
  {
    amount_usd: Type.Number({ description: 'added to the balance; negative to take away' }),
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'why, kept with the grant' })),
  },
  { additionalProperties: false },
);
/** Read as text and checked by hand, so that a bad `limit` is `invalid_limit`. */
export const UsageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'a usage record id: the `last_id` of the previous page' })),
});

const UnixSeconds = Type.Integer({ description: 'Unix timestamp, seconds' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ProjectObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('project'),
  name: Type.String(),
  balance_usd: Type.Number(),
  created_at: UnixSeconds,
});

const apiKeyFields = {
  id: Type.String(),
  object: Type.Literal('api_key'),
  project_id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key, to recognise it' }),
  active: Type.Boolean(),
  created_at: UnixSeconds,
  revoked_at: Nullable(UnixSeconds),
};

export const ProjectList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(ProjectObject),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});

export const ApiKeyObject = Type.Object(apiKeyFields);
export const NewApiKey = Type.Object({ ...apiKeyFields, key: Type.String({ description: 'the secret, shown only in this answer' }) });
const ListedApiKey = Type.Object({ ...apiKeyFields, last_used_at: Nullable(UnixSeconds) });
export const ApiKeyList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ListedApiKey) });

const UsageRecordObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('usage_record'),
  project_id: Type.String(),
  key_id: Nullable(Type.String()),
  payer: Type.Object(
    {
      kind: Type.Union([Type.Literal('project'), Type.Literal('intermediary'), Type.Literal('agent'), Type.Literal('receipt')]),
      id: Type.String({ description: 'the project, intermediary, agent or receipt charged' }),
    },
    { description: 'who paid for the call; only a `project` payer is debited from a project balance' },
  ),
  model: Type.String(),
  route: Type.String(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cost_usd: Type.Number(),
  request_id: Type.String(),
  status: Type.Integer(),
  created_at: UnixSeconds,
});

export const UsageList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(UsageRecordObject),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});

export const CreditGrantList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      object: Type.Literal('credit_grant'),
      project_id: Type.String(),
      amount_usd: Type.Number({ description: 'negative when credit was taken away' }),
      reason: Nullable(Type.String()),
      created_at: UnixSeconds,
    }),
    { description: 'newest first, at most 100' },
  ),
});

const OutboxMessageObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('outbox_message'),
  target_kind: Type.String({ description: 'whose handler delivers it (e.g. `intermediary`)' }),
  idempotency_key: Type.String({ description: 'passed to the receiver with every attempt' }),
  payload: Type.Unknown({ description: 'the JSON message' }),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead')]),
  attempts: Type.Integer(),
  last_error: Nullable(Type.String({ description: 'kind and message of the last failed attempt' })),
  next_attempt_at: UnixSeconds,
  created_at: UnixSeconds,
  delivered_at: Nullable(UnixSeconds),
});

export const OutboxMessage = OutboxMessageObject;

export const OutboxList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(OutboxMessageObject),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});
