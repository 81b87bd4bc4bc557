/**
 * The transcription playground's logic: the multipart fields it sends (verbose_json with
 * segment timestamps), the checks made before sending a file, timestamps as text, and
 * whether this browser can record (MediaRecorder and a microphone API).
 */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
export const AUDIO_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'] as const;

export interface TranscriptionOptions {
  model: string;
  language: string;
  prompt: string;
}

/** The form fields besides the file, in the order they are sent. */
export function transcriptionFields({ model, language, prompt }: TranscriptionOptions): Array<[string, string]> {
  const fields: Array<[string, string]> = [
    ['model', model],
    ['response_format', 'verbose_json'],
    ['timestamp_granularities[]', 'segment'],
  ];
  if (language.trim()) fields.push(['language', language.trim().toLowerCase()]);
  if (prompt.trim()) fields.push(['prompt', prompt]);
  return fields;
}

/** Why `file` cannot be sent, or null. */
export function audioProblem(file: { name: string; size: number }): string | null {
  const ext = file.name.includes('.') ? file.name.split('.').pop()!.toLowerCase() : '';
  if (!(AUDIO_EXTENSIONS as readonly string[]).includes(ext)) return `${file.name} is not one of ${AUDIO_EXTENSIONS.join(', ')}`;
  if (file.size === 0) return `${file.name} is empty`;
  if (file.size > MAX_AUDIO_BYTES) return `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB; the limit is 25 MB`;
  return null;
}

/** Seconds as `m:ss.ss` (`h:mm:ss.ss` from an hour). */
export function timestamp(seconds: number): string {
  const total = Math.max(0, seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = (total % 60).toFixed(2).padStart(5, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

export interface Segment {
  id: number;
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  text: string;
  language: string | null;
  duration: number | null;
  segments: Segment[];
}

/** A verbose_json answer as the page shows it. */
export function readTranscript(answer: unknown): Transcript {
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  const segments = Array.isArray(a.segments)
    ? a.segments.map((s: Record<string, unknown>, i) => ({
        id: typeof s.id === 'number' ? s.id : i,
        start: Number(s.start ?? 0),
        end: Number(s.end ?? 0),
        text: String(s.text ?? '').trim(),
      }))
    : [];
  return {
    text: String(a.text ?? ''),
    language: typeof a.language === 'string' ? a.language : null,
    duration: typeof a.duration === 'number' ? a.duration : null,
    segments,
  };
}

/** Whether recording can be offered at all (a microphone may still be absent or refused). */
export function canRecord(scope: { MediaRecorder?: unknown; navigator?: { mediaDevices?: { getUserMedia?: unknown } } }): boolean {
  return typeof scope.MediaRecorder === 'function' && typeof scope.navigator?.mediaDevices?.getUserMedia === 'function';
}

/** The file name for a recording of `mimeType` (the container MediaRecorder chose). */
export function recordingName(mimeType: string): string {
  if (mimeType.includes('ogg')) return 'recording.ogg';
  if (mimeType.includes('mp4')) return 'recording.mp4';
  return 'recording.webm';
}

/** Words for a getUserMedia failure: no device, refused, or something else. */
export function microphoneProblem(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No microphone was found: choose an audio file instead.';
  if (name === 'NotAllowedError' || name === 'SecurityError') return 'The browser did not allow the microphone: choose an audio file instead.';
  return `Recording could not start (${err instanceof Error ? err.message : String(err)}): choose an audio file instead.`;
}
