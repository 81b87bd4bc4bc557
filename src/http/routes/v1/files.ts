/**
 * /v1/files: upload (multipart, streamed to blob storage), list, retrieve, download and
 * soft delete. Registered in its own scope: the scope drops the JSON parser and reads
 * no body itself, so an upload is parsed only by the multipart reader, part by part,
 * after authentication (onRequest) has already passed.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { PassThrough, type Readable } from 'node:stream';
import type { FilesService } from '../../../domain/files/files.service.js';
import { invalidContentType, invalidMultipart } from '../../../domain/files/files.errors.js';
import {
  FILE_PURPOSES,
  MAX_FILE_PAGE,
  MAX_UPLOAD_BYTES,
  UploadStreamError,
  type UploadPart,
} from '../../../domain/files/files.types.js';
import { isAppError } from '../../../domain/shared/errors.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { principalOf } from '../../auth/caller-auth.js';
import { fileWire, readChoice } from '../../mappers/files-batches.js';
import { notValidated, serializeAsBefore } from '../../schemas/document-only.js';
import { DeletedFile, FileContent, FileIdParams, FileList, FileListQuery, FileObject, FileUploadForm } from '../../schemas/files-batches.js';

const tags = ['files'];

/** A busboy file stream whose own failures (truncated or malformed body) surface as UploadStreamError. */
function guardedFileStream(file: Readable): Readable {
  const out = new PassThrough();
  file.on('error', (err: Error) => {
    if (!out.destroyed) out.destroy(new UploadStreamError(err.message, { cause: err }));
  });
  // A late parser error (after the consumer is done) must not crash the process; the
  // parts iterator reports the same failure to the request.
  out.on('error', () => {});
  file.pipe(out);
  return out;
}

/** The multipart body as UploadParts; parser failures become 400 invalid_multipart. */
async function* uploadParts(request: FastifyRequest): AsyncGenerator<UploadPart> {
  const parts = request.parts({
    // A `file` part without a filename is still the file (its name defaults to `{id}.jsonl`).
    isPartAFile: (name: string, contentType: string, filename: string | undefined) =>
      name === 'file' || filename !== undefined || contentType === 'application/octet-stream',
  } as Parameters<FastifyRequest['parts']>[0]);
  for (;;) {
    let next: IteratorResult<Awaited<ReturnType<typeof parts.next>>['value']>;
    try {
      next = await parts.next();
    } catch (err) {
      throw isAppError(err) ? err : invalidMultipart((err as Error).message);
    }
    if (next.done) return;
    const part = next.value;
    if (part.type === 'field') yield { kind: 'field', name: part.fieldname, value: String(part.value) };
    else yield { kind: 'file', name: part.fieldname, filename: part.filename || undefined, stream: guardedFileStream(part.file) };
  }
}

async function upload(files: FilesService, request: FastifyRequest, reply: FastifyReply) {
  if (!request.isMultipart()) throw invalidContentType();
  try {
    return fileWire(await files.upload(principalOf(request).projectId, uploadParts(request)));
  } catch (err) {
    // Stop reading a body we refused (e.g. past 100 MB): close the connection after the answer.
    if (!request.raw.complete) reply.header('connection', 'close');
    throw err;
  }
}

async function filesScope(scope: FastifyInstance, { files }: { files: FilesService }): Promise<void> {
  scope.removeAllContentTypeParsers();
  // Any other content type reaches the handler unread, which answers invalid_content_type.
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
  await scope.register(multipart, {
    limits: { fileSize: MAX_UPLOAD_BYTES + 1, files: 4, fields: 16, parts: 32, fieldSize: 64 * 1024 },
  });

  scope.post(
    '/files',
    {
      schema: {
        tags,
        summary: 'Upload a .jsonl file',
        consumes: ['multipart/form-data'],
        body: FileUploadForm,
        response: { 200: FileObject },
      },
      // Read part by part as it streams (uploadParts): the form schema documents it.
      ...notValidated,
    },
    (request, reply) => upload(files, request, reply),
  );

  scope.get<{ Querystring: Static<typeof FileListQuery> }>(
    '/files',
    { schema: { tags, summary: 'List files', querystring: FileListQuery, response: { 200: FileList } } },
    async (request) => {
      const q = request.query;
      const page = await files.list(principalOf(request).projectId, {
        purpose: readChoice(q.purpose, FILE_PURPOSES, 'purpose', 'invalid_purpose'),
        order: readChoice(q.order, ['asc', 'desc'] as const, 'order', 'invalid_request_error') ?? 'desc',
        after: q.after,
        limit: readLimit(q.limit, MAX_FILE_PAGE, MAX_FILE_PAGE),
      });
      return toListPage(page, fileWire);
    },
  );

  scope.get<{ Params: Static<typeof FileIdParams> }>(
    '/files/:file_id',
    { schema: { tags, summary: 'Retrieve a file', params: FileIdParams, response: { 200: FileObject } } },
    async (request) => fileWire(await files.retrieve(principalOf(request).projectId, request.params.file_id)),
  );

  scope.get<{ Params: Static<typeof FileIdParams> }>(
    '/files/:file_id/content',
    {
      schema: { tags, summary: 'Download a file (application/jsonl, streamed)', params: FileIdParams, response: { 200: FileContent } },
      ...serializeAsBefore,
    },
    async (request, reply) => {
      const { file, body } = await files.openContent(principalOf(request).projectId, request.params.file_id);
      const asciiName = file.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
      return reply
        .type('application/jsonl')
        .header('content-length', String(file.bytes))
        .header('content-disposition', `attachment; filename="${asciiName}"`)
        .send(body);
    },
  );

  scope.delete<{ Params: Static<typeof FileIdParams> }>(
    '/files/:file_id',
    { schema: { tags, summary: 'Delete a file (soft)', params: FileIdParams, response: { 200: DeletedFile } } },
    async (request) => files.delete(principalOf(request).projectId, request.params.file_id),
  );
}

export function registerFilesRoutes(scope: FastifyInstance, deps: { files: FilesService }): void {
  scope.register(filesScope, deps);
}
