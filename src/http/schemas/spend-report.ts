/** `GET /v1/spend` and `GET /admin/v1/spend`: spend summed per group over a range (domain/billing/spend-report.ts). */
import { Type } from '@sinclair/typebox';

export const SpendQuerySchema = Type.Object({
  group_by: Type.String({ description: 'key, model, tag, end_user or day (UTC)' }),
  since: Type.Optional(Type.String({ description: 'Unix seconds or an ISO 8601 date or date-time, inclusive (default: the start of the UTC month of `until`)' })),
  until: Type.Optional(Type.String({ description: 'Unix seconds or an ISO 8601 date or date-time, exclusive (default: now); at most 366 days after `since`' })),
  format: Type.Optional(Type.String({ description: 'json (default), csv or ndjson; csv and ndjson are streamed as they are read' })),
});

export const AdminSpendQuerySchema = Type.Object({
  ...SpendQuerySchema.properties,
  project_id: Type.Optional(Type.String({ maxLength: 64, description: 'one project (default: every project)' })),
});

const SpendGroupRow = Type.Object({
  group: Type.Union([Type.String(), Type.Null()], {
    description: 'the key id, model, tag, end user or day (YYYY-MM-DD); null for calls made with no key or naming no end user',
  }),
  requests: Type.Integer(),
  input_tokens: Type.Integer(),
  input_cached_tokens: Type.Integer(),
  input_cache_write_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cost_micros: Type.Integer({ description: 'micro-dollars, exact' }),
  cost_usd: Type.Number(),
});

export const SpendReport = Type.Object(
  {
    object: Type.Literal('spend_report'),
    group_by: Type.String(),
    since: Type.Integer({ description: 'Unix seconds' }),
    until: Type.Integer({ description: 'Unix seconds' }),
    data: Type.Array(SpendGroupRow, { description: "groups that have usage in the range, in their group's order; a call with several tags counts under each" }),
  },
  { description: 'With `format=csv` (text/csv) or `format=ndjson` (application/x-ndjson), the same rows, one per line, streamed.' },
);
