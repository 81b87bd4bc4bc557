/** The request log's wire shapes: a call's summary and detail, its body, a session, the list filters and the logging settings. */
import { Type, type TSchema } from '@sinclair/typebox';
import { ListOf } from './files-batches.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Str = (description: string) => Type.Optional(Type.String({ description }));

export const RequestLogQuery = Type.Object({
  limit: Str('integer 1..100, default 20'),
  after: Str('a request id: the `last_id` of the previous page'),
  key_id: Str('only calls made with this API key'),
  model: Str('only calls that asked for, or were served by, this model'),
  status: Str('an HTTP status (200, 429, …), or `error` for any status of 400 or more'),
  tag: Str('only calls carrying this tag'),
  session_id: Str('only calls of this session'),
  since: Str('unix seconds: calls from this time on'),
  until: Str('unix seconds: calls before this time'),
  min_cost_usd: Str('only calls that cost at least this many dollars'),
});

export const AdminRequestLogQuery = Type.Object({ ...RequestLogQuery.properties, project_id: Str('only this project') });

export const ExportQuery = Type.Object({
  ...AdminRequestLogQuery.properties,
  format: Type.Optional(Type.Literal('ndjson', { description: 'ndjson (the default and only format): one detail record per line' })),
});

/** The export's answer: documented only (written as a stream, a line at a time). */
export const RequestExport = { content: { 'application/x-ndjson': { schema: Type.String({ description: 'one detail record (as GET /admin/v1/requests/{request_id}) per line' }) } } };

export const RequestIdParams = Type.Object({ request_id: Type.String({ minLength: 1 }) });
export const SessionIdParams = Type.Object({ session_id: Type.String({ minLength: 1 }) });

const Usage = Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer(), cached_input_tokens: Type.Integer() });

const summaryFields = {
  id: Type.String(),
  object: Type.Literal('request'),
  created_at: Type.Integer({ description: 'unix seconds' }),
  project_id: Type.String(),
  key_id: Nullable(Type.String()),
  route: Type.String(),
  wire: Type.String(),
  scope: Type.String(),
  model_requested: Type.String(),
  model: Nullable(Type.String()),
  provider: Nullable(Type.String()),
  deployment: Nullable(Type.String()),
  status: Type.Integer(),
  error_code: Nullable(Type.String()),
  stream: Type.Boolean(),
  session_id: Nullable(Type.String()),
  end_user: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  batch_id: Nullable(Type.String()),
  usage: Usage,
  cost_usd: Type.Number(),
  latency_ms: Type.Object({
    credit_wait: Nullable(Type.Number()),
    first_byte: Nullable(Type.Number()),
    engine: Nullable(Type.Number()),
    total: Type.Number(),
  }),
  body_logged: Type.Boolean(),
};

export const RequestSummary = Type.Object(summaryFields);

export const RequestDetail = Type.Object({
  ...summaryFields,
  attempts: Type.Array(
    Type.Object({
      deployment: Type.String(),
      provider: Nullable(Type.String()),
      status: Nullable(Type.Integer()),
      error_code: Nullable(Type.String()),
      started_ms: Type.Number({ description: 'milliseconds after the request began' }),
      duration_ms: Type.Number(),
    }),
  ),
  fallback: Type.Boolean(),
  tools_called: Type.Array(Type.String()),
  hold_usd: Nullable(Type.Number()),
  settled_usd: Nullable(Type.Number()),
});

export const RequestList = ListOf(RequestSummary);

export const RequestBody = Type.Object({
  object: Type.Literal('request_body'),
  id: Type.String(),
  mode: Type.Union([Type.Literal('redacted'), Type.Literal('full')]),
  request: Type.Unknown(),
  response: Type.Unknown(),
  truncated: Type.Boolean(),
});

export const RequestSessionObject = Type.Object({
  object: Type.Literal('request_session'),
  id: Type.String(),
  requests: Type.Integer(),
  first_at: Type.Integer({ description: 'unix seconds' }),
  last_at: Type.Integer({ description: 'unix seconds' }),
  usage: Usage,
  cost_usd: Type.Number(),
  data: Type.Array(RequestSummary),
});

export const LoggingSettingsObject = Type.Object({
  object: Type.Literal('project.logging'),
  project_id: Type.String(),
  bodies: Type.Union([Type.Literal('off'), Type.Literal('redacted'), Type.Literal('full')]),
  retention_days: Type.Integer(),
});

export const LoggingSettingsBody = Type.Object(
  {
    bodies: Type.Optional(Type.Union([Type.Literal('off'), Type.Literal('redacted'), Type.Literal('full')], { description: 'what the project keeps of bodies' })),
    retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'days a call stays in the log' })),
  },
  { additionalProperties: false },
);
