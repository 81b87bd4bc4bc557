/**
 * POST /v1/audio/transcriptions and /translations: the multipart form, for the OpenAPI
 * document. The form is read part by part as it streams (the file goes to disk, never to
 * memory), so these fields are checked by `domain/audio/transcription-request.ts`, not by
 * Fastify.
 */
import { Type } from '@sinclair/typebox';
import { AUDIO_EXTENSIONS, MAX_PROMPT_CHARS, RESPONSE_FORMATS } from '../../domain/audio/transcription-request.js';

const formFields = {
  file: Type.String({
    format: 'binary',
    description: `the audio, at most 25 MB and 600 s; extensions: ${AUDIO_EXTENSIONS.join(', ')}`,
  }),
  model: Type.String({ description: 'a transcription model id from GET /v1/models' }),
  prompt: Type.Optional(Type.String({ maxLength: MAX_PROMPT_CHARS })),
  response_format: Type.Optional(Type.Union(RESPONSE_FORMATS.map((f) => Type.Literal(f)), { description: 'default json' })),
  temperature: Type.Optional(Type.String({ description: 'a number between 0 and 1 (form fields are text); default 0' })),
};

export const TranscriptionForm = Type.Object({
  ...formFields,
  language: Type.Optional(Type.String({ description: 'ISO-639-1 code of the spoken language, e.g. "en"' })),
  'timestamp_granularities[]': Type.Optional(
    Type.Array(Type.Union([Type.Literal('segment'), Type.Literal('word')]), { description: 'with response_format verbose_json only' }),
  ),
});

export const TranslationForm = Type.Object(formFields, { description: 'the output is English text' });

const TranscriptionJson = Type.Object(
  {
    text: Type.String(),
    task: Type.Optional(Type.String()),
    language: Type.Optional(Type.String()),
    duration: Type.Optional(Type.Number()),
    segments: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
    words: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  },
  { description: 'json: {text}; verbose_json adds task, language, duration, segments and words' },
);

/** JSON for json and verbose_json, text for text, srt and vtt. */
export const TranscriptionResponse = {
  content: {
    'application/json': { schema: TranscriptionJson },
    'text/plain': { schema: Type.String({ description: 'text, srt or vtt' }) },
  },
};

/**
 * The arguments of the MCP `transcribe` tool: the form's fields, with the audio as base64
 * text (`audio`) or a file of the caller's project (`file_id`) in place of the upload, and
 * `temperature` a number. Checked by the same reader as the form.
 */
export const TranscribeToolArgs = Type.Object({
  model: formFields.model,
  audio: Type.Optional(Type.String({ contentEncoding: 'base64', description: 'the audio file, base64-encoded (the whole request is at most 4 MiB)' })),
  file_id: Type.Optional(Type.String({ description: 'instead of audio: a file of your project (POST /v1/files) holding the audio' })),
  filename: Type.Optional(Type.String({ description: `the audio's file name; its extension names the format (${AUDIO_EXTENSIONS.join(', ')})` })),
  language: TranscriptionForm.properties.language,
  prompt: formFields.prompt,
  response_format: formFields.response_format,
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'default 0' })),
  timestamp_granularities: TranscriptionForm.properties['timestamp_granularities[]'],
});
