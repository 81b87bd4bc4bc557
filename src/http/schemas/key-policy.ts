/**
 * A key's policy on the admin API: the fields key creation and `PATCH /keys/:id` take
 * (absent: unchanged, null: cleared), and those every key object shows. The types here
 * are checked by the validator; what they mean (globs that overlap, a past expiry, a
 * budget below zero) is checked by the domain (src/domain/identity/key-policy.ts).
 */
import { Type, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const nullableOr = <T extends TSchema>(schema: T, description: string) => Type.Optional(Nullable({ ...schema, description }));

const Window = Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('total')], {
  description: 'a UTC calendar day, ISO week (from Monday) or month, or the key’s whole life',
});
const BudgetWire = Type.Object(
  { limit_usd: Type.Number({ description: 'the most the key may spend in one window, in US dollars (0 or more)' }), window: Window },
  { description: 'a spending limit per window' },
);

/** Policy fields a request may set: absent leaves a field as it is, null clears it. */
export const keyPolicyInputFields = {
  models: nullableOr(Type.Array(Type.String()), 'model names and glob patterns (`*`, `?`); null: every model'),
  budget: nullableOr(Type.Unsafe<Record<string, unknown>>({ type: 'object' }), '`{"limit_usd": <dollars, 0 or more>, "window": "day" | "week" | "month" | "total"}`'),
  rpm: nullableOr(Type.Integer(), 'requests per minute, 1 or more'),
  tpm: nullableOr(Type.Integer(), 'tokens per minute, 1 or more'),
  expires_at: nullableOr(Type.Integer(), 'Unix timestamp, seconds, in the future'),
  metadata: nullableOr(Type.Record(Type.String(), Type.String()), 'labels, string to string'),
  tags: nullableOr(Type.Array(Type.String()), 'tags recorded on every call the key makes'),
};

/** Policy fields every key object shows; null where the key sets none. */
export const keyPolicyFields = {
  models: Nullable(Type.Array(Type.String(), { description: 'model names and glob patterns (`*`, `?`) the key may reach; null: every model' })),
  budget: Nullable(BudgetWire),
  rpm: Nullable(Type.Integer({ description: 'requests per minute' })),
  tpm: Nullable(Type.Integer({ description: 'tokens per minute, counted on settled usage' })),
  expires_at: Nullable(Type.Integer({ description: 'Unix timestamp, seconds: the key stops working then' })),
  metadata: Nullable(Type.Record(Type.String(), Type.String())),
  tags: Nullable(Type.Array(Type.String(), { description: 'recorded on every call the key makes' })),
  previous_key_valid_until: Nullable(Type.Integer({ description: 'Unix timestamp, seconds: the secret the last rotation replaced works until then' })),
};

export const RotateBody = Type.Object(
  { grace_seconds: Type.Integer({ description: 'how long the old secret keeps working, 0 to 2592000 (30 days); 0 stops it at once' }) },
  { additionalProperties: false },
);
