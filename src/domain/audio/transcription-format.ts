/** Renders a transcription in the requested response_format: json, text, srt, vtt, verbose_json. */
import type { TranscriptionOutput } from '../models/inference-backend.port.js';
import { WHISPER_LANGUAGES } from './languages.js';
import type { ResponseFormat, TranscriptionRequest } from './transcription-request.js';

export interface RenderedTranscription {
  contentType: 'application/json' | 'text/plain';
  body: string | Record<string, unknown>;
}

function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

function cues(out: TranscriptionOutput, format: 'srt' | 'vtt'): string {
  const sep = format === 'srt' ? ',' : '.';
  const blocks = out.segments.map((s, i) => {
    const timing = `${clock(s.start, sep)} --> ${clock(s.end, sep)}`;
    return format === 'srt' ? `${i + 1}\n${timing}\n${s.text.trim()}\n` : `${timing}\n${s.text.trim()}\n`;
  });
  return format === 'srt' ? blocks.join('\n') : `WEBVTT\n\n${blocks.join('\n')}`;
}

function verbose(out: TranscriptionOutput, request: TranscriptionRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    task: request.task,
    // A translation is English whatever was spoken.
    language: request.task === 'translate' ? 'english' : (Object.hasOwn(WHISPER_LANGUAGES, out.language) ? WHISPER_LANGUAGES[out.language]! : out.language),
    duration: out.duration,
    text: out.text,
  };
  if (request.segments) {
    body.segments = out.segments.map((s) => ({
      id: s.id,
      seek: s.seek,
      start: s.start,
      end: s.end,
      text: s.text,
      tokens: s.tokens,
      temperature: s.temperature,
      avg_logprob: s.avgLogprob,
      compression_ratio: s.compressionRatio,
      no_speech_prob: s.noSpeechProb,
    }));
  }
  if (request.words) body.words = out.words ?? [];
  return body;
}

export function renderTranscription(out: TranscriptionOutput, request: TranscriptionRequest): RenderedTranscription {
  const format: ResponseFormat = request.responseFormat;
  switch (format) {
    case 'json':
      return { contentType: 'application/json', body: { text: out.text } };
    case 'verbose_json':
      return { contentType: 'application/json', body: verbose(out, request) };
    case 'text':
      return { contentType: 'text/plain', body: `${out.text}\n` };
    case 'srt':
    case 'vtt':
      return { contentType: 'text/plain', body: cues(out, format) };
  }
}
