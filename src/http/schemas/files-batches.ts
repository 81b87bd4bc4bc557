/**
 * Wire schemas of the Files and Batch APIs (OpenAI shapes, snake_case), for docs and
 * serialization, and their requests. The upload form and the create-batch body are
 * documented, not validated by Fastify: the upload is read part by part as it streams, and
 * every refused create must still be recorded as a failed batch by the service.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { COMPLETION_WINDOW, MAX_OUTPUT_EXPIRY_SECONDS, MIN_OUTPUT_EXPIRY_SECONDS } from '../../domain/batches/batch.types.js';
import { FILE_PURPOSES, MAX_UPLOAD_BYTES } from '../../domain/files/files.types.js';
import { typed } from '../../wire/fields.js';

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

/** A page of `item`s in OpenAI's list envelope (the admin listings use it too). */
export const ListOf = <T extends TSchema>(item: T) =>
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

const Tokens = Type.Integer({ minimum: 0 });

/** OpenAI's batch usage: the tokens of every recorded line, summed (live while the batch runs). */
const BatchUsage = Type.Object(
  {
    input_tokens: Tokens,
    input_tokens_details: Type.Object({ cached_tokens: Tokens }),
    output_tokens: Tokens,
    output_tokens_details: Type.Object({ reasoning_tokens: Tokens }),
    total_tokens: Tokens,
  },
  { description: 'tokens used by the recorded lines, summed; lines without a usage in their answer (moderations) count what was metered' },
);

export const BatchObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('batch'),
  endpoint: Type.String(),
  model: Nullable(Type.String({ description: "the model the lines name (the first line's `body.model`); null before validation" })),
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
  usage: BatchUsage,
  metadata: Type.Record(Type.String(), Type.Unknown()),
});

export const BatchList = ListOf(BatchObject);

export const FileIdParams = Type.Object({ file_id: Type.String() });
export const BatchIdParams = Type.Object({ batch_id: Type.String() });

const choice = (values: readonly string[], param: string, code: string, description: string) =>
  Type.Optional(typed<string>('string', { enum: values, description }, { default: `${param} must be one of ${values.join(', ')}`, code }));

/** `limit` is read as text and checked by hand (readLimit), so that a bad one is `invalid_limit`. */
export const FileListQuery = Type.Object({
  purpose: choice(FILE_PURPOSES, 'purpose', 'invalid_purpose', 'only files of this purpose'),
  order: choice(['asc', 'desc'], 'order', 'invalid_request_error', '`desc` (default) or `asc`, by created_at'),
  after: Type.Optional(Type.String({ description: 'a file id: the `last_id` of the previous page' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..10000, default 10000' })),
});

export const BatchListQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'a batch id: the `last_id` of the previous page' })),
  limit: Type.Optional(Type.String({ description: 'integer 1..100, default 20' })),
});

export const FileUploadForm = Type.Object({
  purpose: Type.Literal('batch', { description: 'before or after the file; a bad purpose before it is refused before the file is read' }),
  file: Type.String({ format: 'binary', description: `a .jsonl file of at most ${MAX_UPLOAD_BYTES / 1024 / 1024} MB` }),
});

/** Served as stored, streamed. */
export const FileContent = { content: { 'application/jsonl': { schema: Type.String({ description: 'the file, one JSON object a line' }) } } };

/** The create-batch body; `endpoint` is one of `batchable`, the urls the app was assembled to batch (its wire formats' and its features'). */
export const batchCreateBody = (batchable: readonly string[]) => Type.Object(
  {
    input_file_id: Type.String({ description: 'an uploaded file of purpose batch' }),
    endpoint: Type.Union(
      batchable.map((e) => Type.Literal(e)),
      { description: 'the url every line of the file uses; `batches.endpoints` in sluice.yaml says which are allowed (default: /v1/chat/completions)' },
    ),
    completion_window: Type.Optional(Type.Literal(COMPLETION_WINDOW)),
    metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    output_expires_after: Type.Optional(
      Type.Object(
        {
          anchor: Type.Literal('created_at', { description: "the output or error file's creation" }),
          seconds: Type.Integer({ minimum: MIN_OUTPUT_EXPIRY_SECONDS, maximum: MAX_OUTPUT_EXPIRY_SECONDS }),
        },
        { description: 'when the output and error files expire (default: 30 days after they are written)' },
      ),
    ),
  },
  { description: 'A refused request is still recorded, as a failed batch carrying the error.' },
);
