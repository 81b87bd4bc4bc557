/**
 * `transcribe`: speech to text, as POST /v1/audio/transcriptions. The audio arrives as
 * base64 text in the arguments (bounded by the endpoint's body limit) or as a file of the
 * caller's project; either is written to a temporary file, as the REST route streams its
 * upload, and the form's fields go through the same reader and service, so the call is
 * checked, held, metered and refused exactly as the REST call. The temporary file is
 * removed whatever happens.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Caller } from '../../../domain/identity/caller.js';
import type { AudioUpload } from '../../../domain/audio/transcription.service.js';
import { MAX_AUDIO_BYTES } from '../../../domain/audio/transcription-request.js';
import { AppError, invalidRequest, isAppError } from '../../../domain/shared/errors.js';
import { TranscribeToolArgs } from '../../schemas/audio.js';
import { field, narrowed, serviceContext, type McpToolServices, type RunContext, type ToolSpec } from './tool-spec.js';

/** The form fields the arguments stand for (strings, as a form sends them). */
const TEXT_FIELDS = ['model', 'language', 'prompt', 'response_format'] as const;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const tooLarge = () =>
  new AppError('payload_too_large', `Audio file is too large: the limit is ${MAX_AUDIO_BYTES / 1024 / 1024} MB`, { code: 'file_too_large', param: 'file_id' });

/** The arguments as the form reader takes them; a value of the wrong type is refused naming it. */
export function formFieldsOf(args: Record<string, unknown>): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const name of TEXT_FIELDS) {
    const value = field(args, name);
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw invalidRequest(`${name} must be a string`, name);
    fields.set(name, [value]);
  }
  const temperature = field(args, 'temperature');
  if (temperature !== undefined && temperature !== null) {
    if (typeof temperature !== 'number' && typeof temperature !== 'string') throw invalidRequest('temperature must be a number between 0 and 1', 'temperature');
    fields.set('temperature', [String(temperature)]);
  }
  const granularities = field(args, 'timestamp_granularities');
  if (granularities !== undefined && granularities !== null) {
    if (!Array.isArray(granularities) || granularities.some((g) => typeof g !== 'string')) {
      throw invalidRequest('timestamp_granularities must be an array of "segment" or "word"', 'timestamp_granularities');
    }
    fields.set('timestamp_granularities[]', granularities as string[]);
  }
  return fields;
}

/** The base64 audio of the arguments, decoded; a data: URL's prefix is read past. */
function decodeAudio(value: unknown): Buffer {
  if (typeof value !== 'string') throw invalidRequest('audio must be a string: the audio file, base64-encoded', 'audio');
  const text = value.replace(/^data:[^,]*;base64,/, '').replace(/\s+/g, '');
  if (text === '' || text.length % 4 === 1 || !BASE64.test(text)) throw invalidRequest('audio must be the audio file, base64-encoded', 'audio', 'invalid_audio');
  return Buffer.from(text, 'base64');
}

/** A file of the caller's project, copied to `file` (at most the audio limit). */
async function copyFile(s: McpToolServices, caller: Caller, id: unknown, file: string): Promise<number> {
  if (typeof id !== 'string' || id === '') throw invalidRequest('file_id must be a non-empty string', 'file_id');
  const { body } = await s.files.openContent(caller.principal.projectId, id);
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(bytes > MAX_AUDIO_BYTES ? tooLarge() : null, chunk);
    },
  });
  await pipeline(body, counted, createWriteStream(file));
  return bytes;
}

/** The audio of the call on disk: from `audio` or from `file_id`, exactly one of them. */
async function uploadOf(s: McpToolServices, caller: Caller, args: Record<string, unknown>, dir: string): Promise<AudioUpload> {
  const audio = field(args, 'audio');
  const fileId = field(args, 'file_id');
  const filename = field(args, 'filename');
  if (filename !== undefined && filename !== null && typeof filename !== 'string') throw invalidRequest('filename must be a string', 'filename');
  const file = path.join(dir, 'upload');
  const named = { path: file, filename: (filename as string | null | undefined) ?? undefined };
  if (audio !== undefined && audio !== null) {
    if (fileId !== undefined && fileId !== null) throw invalidRequest('Send the audio as audio or as file_id, not both', 'file_id');
    const bytes = decodeAudio(audio);
    await writeFile(file, bytes);
    return { ...named, bytes: bytes.length };
  }
  if (fileId === undefined || fileId === null) throw invalidRequest('audio is required: the audio file, base64-encoded (or file_id, a file of your project)', 'audio');
  return { ...named, bytes: await copyFile(s, caller, fileId, file) };
}

async function transcribe(s: McpToolServices, caller: Caller, args: Record<string, unknown>, run: RunContext): Promise<unknown> {
  const fields = formFieldsOf(args);
  const dir = await mkdtemp(path.join(tmpdir(), 'sluice-mcp-audio-'));
  try {
    const upload = await uploadOf(s, caller, args, dir);
    return await s.transcription.run(caller, 'transcribe', fields, upload, serviceContext(run));
  } catch (err) {
    // The form's `file` is, here, whichever argument carried the audio.
    if (!isAppError(err) || err.param !== 'file') throw err;
    throw new AppError(err.kind, err.message, { code: err.code, param: field(args, 'file_id') == null ? 'audio' : 'file_id' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** JSON formats answer their object; text, srt and vtt answer `{text}` with the rendering. */
function transcriptAnswer(value: unknown): Record<string, unknown> {
  const { body } = value as { body: string | Record<string, unknown> };
  return typeof body === 'string' ? { text: body } : body;
}

export const TRANSCRIBE_TOOL: ToolSpec = {
  title: 'Transcribe audio',
  description:
    'Speech to text, as POST /v1/audio/transcriptions: audio as base64 (or file_id), response_format json (default), verbose_json, text, srt or vtt. Input counts 50 tokens per second of audio.',
  schema: (models) => narrowed(TranscribeToolArgs, models),
  run: transcribe,
  answer: transcriptAnswer,
};
