/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (multipart/form-data). The
 * uploaded file is streamed to a temporary file, never held in memory, and reading stops
 * at the 25 MB limit (413). Everything else is the TranscriptionService's.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AppError, invalidRequest, isAppError } from '../../../domain/shared/errors.js';
import type { AudioUpload, TranscriptionService } from '../../../domain/audio/transcription.service.js';
import { MAX_AUDIO_BYTES, type AudioTask } from '../../../domain/audio/transcription-request.js';
import { callerOf } from '../../auth/caller-auth.js';
import { clientAbortSignal } from '../../sse.js';
import { documentOnly } from '../../schemas/document-only.js';
import { TranscriptionForm, TranscriptionResponse, TranslationForm } from '../../schemas/audio.js';
import type { TSchema } from '@sinclair/typebox';

const tooLarge = () =>
  new AppError('payload_too_large', `Audio file is too large: the limit is ${MAX_AUDIO_BYTES / 1024 / 1024} MB`, {
    code: 'file_too_large',
    param: 'file',
  });

interface Form {
  fields: Map<string, string[]>;
  upload: AudioUpload | null;
}

async function readForm(request: FastifyRequest, dir: string): Promise<Form> {
  const fields = new Map<string, string[]>();
  let upload: AudioUpload | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        fields.set(part.fieldname, [...(fields.get(part.fieldname) ?? []), String(part.value)]);
      } else if (part.fieldname === 'file' && !upload) {
        const file = path.join(dir, 'upload');
        let bytes = 0;
        part.file.on('data', (chunk: Buffer) => (bytes += chunk.length));
        await pipeline(part.file, createWriteStream(file));
        if (part.file.truncated) throw tooLarge();
        upload = { path: file, filename: part.filename || undefined, bytes };
      } else {
        part.file.resume();
      }
    }
  } catch (err) {
    if (isAppError(err)) throw err;
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    throw invalidRequest(`Could not parse the multipart body: ${(err as Error).message}`, null, 'invalid_multipart');
  }
  return { fields, upload };
}

async function handle(service: TranscriptionService, task: AudioTask, request: FastifyRequest, reply: FastifyReply) {
  if (!request.isMultipart()) throw invalidRequest('Audio must be sent as multipart/form-data', null, 'invalid_content_type');
  const dir = await mkdtemp(path.join(tmpdir(), 'sluice-audio-'));
  try {
    const { fields, upload } = await readForm(request, dir);
    const context = { requestId: request.id, signal: clientAbortSignal(reply) };
    const rendered = await service.run(callerOf(request), task, fields, upload, context);
    const type = rendered.contentType === 'text/plain' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
    return reply.type(type).send(rendered.body);
  } catch (err) {
    // Stop reading a body we refused (e.g. past 25 MB): close the connection after the answer.
    if (!request.raw.complete) reply.header('connection', 'close');
    throw err;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function audioScope(scope: FastifyInstance, { transcription: service }: { transcription: TranscriptionService }): Promise<void> {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
  await scope.register(multipart, { limits: { fileSize: MAX_AUDIO_BYTES, files: 2, fields: 32, parts: 40, fieldSize: 64 * 1024 } });
  // The form is read as it streams (readForm), so the body schema documents and does not validate.
  const schema = (summary: string, body: TSchema) => ({
    tags: ['audio'],
    summary,
    consumes: ['multipart/form-data'],
    body,
    response: { 200: TranscriptionResponse },
  });
  scope.post('/audio/transcriptions', { schema: schema('Transcribe audio', TranscriptionForm), ...documentOnly }, (request, reply) =>
    handle(service, 'transcribe', request, reply),
  );
  scope.post('/audio/translations', { schema: schema('Translate audio to English text', TranslationForm), ...documentOnly }, (request, reply) =>
    handle(service, 'translate', request, reply),
  );
}

export function registerAudioRoutes(scope: FastifyInstance, deps: { transcription: TranscriptionService }): void {
  scope.register(audioScope, deps);
}
