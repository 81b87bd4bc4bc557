/**
 * The form fields of POST /v1/audio/transcriptions and /translations, validated: the
 * spec's limits (prompt ≤ 4096 characters, temperature 0..1, ISO-639-1 language,
 * response formats) and the timestamp granularities that need verbose_json.
 */
import { invalidRequest } from '../shared/errors.js';
import { WHISPER_LANGUAGES } from './languages.js';

export const AUDIO_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'] as const;
export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];
export type AudioTask = 'transcribe' | 'translate';

export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
export const MAX_AUDIO_SECONDS = 600;
export const MAX_PROMPT_CHARS = 4096;

export interface TranscriptionRequest {
  model: string;
  task: AudioTask;
  language: string | null;
  prompt: string | null;
  responseFormat: ResponseFormat;
  temperature: number;
  segments: boolean;
  words: boolean;
}

/** Form fields as received; repeated fields (timestamp_granularities[]) keep every value. */
export type FormFields = ReadonlyMap<string, readonly string[]>;

const one = (fields: FormFields, name: string): string | undefined => fields.get(name)?.[0];

function readTemperature(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 0;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw invalidRequest('temperature must be a number between 0 and 1', 'temperature');
  return value;
}

function readLanguage(raw: string | undefined, task: AudioTask): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  if (task === 'translate') throw invalidRequest('language is not supported on translations; the output is English', 'language');
  const code = raw.trim().toLowerCase();
  if (!Object.hasOwn(WHISPER_LANGUAGES, code)) {
    throw invalidRequest(`language must be an ISO-639-1 code such as "en" or "fr", got "${raw}"`, 'language');
  }
  return code;
}

function readGranularities(fields: FormFields, format: ResponseFormat): { segments: boolean; words: boolean } {
  const values = [...(fields.get('timestamp_granularities[]') ?? []), ...(fields.get('timestamp_granularities') ?? [])];
  for (const v of values) {
    if (v !== 'segment' && v !== 'word') throw invalidRequest(`timestamp_granularities values must be "segment" or "word", got "${v}"`, 'timestamp_granularities');
  }
  if (values.length > 0 && format !== 'verbose_json') {
    throw invalidRequest('timestamp_granularities requires response_format "verbose_json"', 'timestamp_granularities');
  }
  return { segments: values.length === 0 || values.includes('segment'), words: values.includes('word') };
}

export function parseTranscriptionRequest(fields: FormFields, task: AudioTask): TranscriptionRequest {
  const model = one(fields, 'model')?.trim();
  if (!model) throw invalidRequest('model is required', 'model');
  const format = (one(fields, 'response_format') ?? 'json') as ResponseFormat;
  if (!RESPONSE_FORMATS.includes(format)) {
    throw invalidRequest(`response_format must be one of ${RESPONSE_FORMATS.join(', ')}`, 'response_format');
  }
  const prompt = one(fields, 'prompt') ?? null;
  if (prompt !== null && prompt.length > MAX_PROMPT_CHARS) {
    throw invalidRequest(`prompt must be at most ${MAX_PROMPT_CHARS} characters, got ${prompt.length}`, 'prompt');
  }
  return {
    model,
    task,
    language: readLanguage(one(fields, 'language'), task),
    prompt: prompt && prompt.trim() !== '' ? prompt : null,
    responseFormat: format,
    temperature: readTemperature(one(fields, 'temperature')),
    ...readGranularities(fields, format),
  };
}

/** Refuses file names whose extension is not an audio format the route takes. */
export function assertAudioFileName(filename: string | undefined): void {
  const ext = filename?.includes('.') ? filename.split('.').pop()!.toLowerCase() : null;
  if (ext !== null && !(AUDIO_EXTENSIONS as readonly string[]).includes(ext)) {
    throw invalidRequest(`Invalid file format. Supported formats: ${AUDIO_EXTENSIONS.join(', ')}`, 'file', 'invalid_file_format');
  }
}
