/** Wire schemas of the Files and Batch APIs (OpenAI shapes, snake_case), for docs and serialization. */
import { Type, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const UnixSeconds = Type.Integer({ description: 'Unix timestamp, seconds' });

export const FileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  bytes: Type.Integer(),
  created_at: UnixSeconds,
  expires_at: Nullable(UnixSeconds),
  filename: Type.String(),
  purpose: Type.String({ description: '`batch` (uploads) or `batch_output` (batch results)' }),
  status: Type.String({ description: '`uploaded`, `processed` or `error`' }),
  status_details: Nullable(Type.String()),
  is_error: Type.Optional(Type.Boolean({ description: 'present, and true, only on a batch error file' })),
});

export const DeletedFile = Type.Object({ id: Type.String(), object: Type.Literal('file'), deleted: Type.Boolean() });

const ListOf = <T extends TSchema>(item: T) =>
  Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    first_id: Nullable(Type.String()),
    last_id: Nullable(Type.String()),
    has_more: Type.Boolean(),
  });

export const FileList = ListOf(FileObject);

const BatchErrorEntry = Type.Object({
  code: Type.String(),
  message: Type.String(),
  line: Nullable(Type.Integer()),
  param: Nullable(Type.String()),
});

export const BatchObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('batch'),
  endpoint: Type.String(),
  errors: Nullable(Type.Object({ object: Type.Literal('list'), data: Type.Array(BatchErrorEntry) })),
  input_file_id: Type.String(),
  completion_window: Type.String(),
  status: Type.String(),
  output_file_id: Nullable(Type.String()),
  error_file_id: Nullable(Type.String()),
  created_at: UnixSeconds,
  in_progress_at: Nullable(UnixSeconds),
  expires_at: UnixSeconds,
  finalizing_at: Nullable(UnixSeconds),
  completed_at: Nullable(UnixSeconds),
  failed_at: Nullable(UnixSeconds),
  expired_at: Nullable(UnixSeconds),
  cancelling_at: Nullable(UnixSeconds),
  cancelled_at: Nullable(UnixSeconds),
  request_counts: Type.Object({ total: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() }),
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

export const BatchList = ListOf(BatchObject);

export const FileIdParams = Type.Object({ file_id: Type.String() });
export const BatchIdParams = Type.Object({ batch_id: Type.String() });

/** Query strings are read as text and checked by hand, so that a bad `limit` is `invalid_limit`. */
export const FileListQuery = Type.Object({
  purpose: Type.Optional(Type.String({ description: '`batch` or `batch_output`' })),
  order: Type.Optional(Type.String({ description: '`desc` (default) or `asc`, by created_at' })),
  after: Type.Optional(Type.String({ description: 'a file id: the `last_id` of the previous page' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..10000, default 10000' })),
});

export const BatchListQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'a batch id: the `last_id` of the previous page' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
});
