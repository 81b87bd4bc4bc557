/** The admin API (`/admin/v1`): request bodies, params and query, and the wire objects of `routes/admin/mappers.ts`. */
import { Type, type TSchema } from '@sinclair/typebox';
import { ListOf } from './files-batches.js';
import { keyPolicyFields, keyPolicyInputFields } from './key-policy.js';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const NameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const NewKeyBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default "default"' })), ...keyPolicyInputFields },
  { additionalProperties: false, description: 'may be omitted entirely: a key named "default" with no policy' },
);
export const KeyPatchBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...keyPolicyInputFields },
  { additionalProperties: false, description: 'the fields to change: an absent field is kept, a null one cleared' },
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
  owner_user_id: Nullable(Type.String({ description: 'the user who made the key in the console (a member manages only their own); null: an operator, the admin token or the CLI' })),
  ...keyPolicyFields,
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

/** `state` is checked by the route (readChoice), so that a bad one gets the same wording as other lists' choices. */
export const OutboxListQuery = Type.Object({
  state: Type.Optional(Type.String({ description: '`pending`, `delivered` or `dead`; default every state' })),
  target_kind: Type.Optional(Type.String({ maxLength: 32, description: 'only messages of this target kind (e.g. `intermediary`)' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'a message id: the `last_id` of the previous page' })),
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

/** The choices are checked by the route (readChoice), as the outbox list's `state`. */
export const StorefrontPurchaseQuery = Type.Object({
  rail: Type.Optional(Type.String({ description: '`x402`, `mpp` or `card`; default every rail' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'a purchase id: the `last_id` of the previous page' })),
});

export const StorefrontAccountQuery = Type.Object({
  holder_kind: Type.Optional(Type.String({ description: '`agent` or `receipt`; default both' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
  after: Type.Optional(Type.String({ description: 'an account `id`: the `last_id` of the previous page' })),
});

const Holder = Type.Object(
  {
    kind: Type.Union([Type.Literal('agent'), Type.Literal('receipt')]),
    id: Type.String({ description: 'the agent id, or the SHA-256 (hex) of the receipt id: the receipt itself is never stored' }),
  },
  { description: 'who holds the credit' },
);

const StorefrontPurchaseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('storefront_purchase'),
  seller_id: Type.String(),
  holder: Holder,
  rail: Nullable(Type.Union([Type.Literal('x402'), Type.Literal('mpp'), Type.Literal('card')])),
  amount_usd: Type.Number({ description: 'the credit bought' }),
  payment_ref: Nullable(Type.String({ description: 'the payment reference as stored (unique: a payment credits once): `x402:<network>:<nonce>`, `mpp:<challenge id>`, `card:<checkout id>`' })),
  detail: Nullable(Type.String({ description: 'the settlement transaction, when the rail names one' })),
  created_at: UnixSeconds,
});

const StorefrontAccountObject = Type.Object({
  id: Type.String({ description: 'the account\'s opaque place in this list (an account is keyed by seller and holder); pass it as `after`' }),
  object: Type.Literal('storefront_account'),
  seller_id: Type.String(),
  holder: Holder,
  balance_usd: Type.Number(),
  purchased_usd: Type.Number(),
  consumed_usd: Type.Number(),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  created_at: UnixSeconds,
  updated_at: UnixSeconds,
});

export const StorefrontPurchaseList = ListOf(StorefrontPurchaseObject);
export const StorefrontAccountList = ListOf(StorefrontAccountObject);
