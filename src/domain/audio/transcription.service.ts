/**
 * POST /v1/audio/transcriptions and /v1/audio/translations: validate the form, check
 * the model and the balance, decode the uploaded file (already on disk) to 16 kHz mono,
 * run the speech model, meter and bill, render the requested format.
 */
import type { Caller } from '../access/caller.js';
import { meteredCall, type MeteredCall } from '../billing/meter.js';
import { invalidRequest } from '../shared/errors.js';
import type { CallContext } from '../../inference/backend.js';
import type { ModelRegistry } from '../../inference/registry.js';
import type { AudioDecoder } from './ffmpeg-decoder.js';
import { renderTranscription, type RenderedTranscription } from './transcription-format.js';
import { MAX_AUDIO_SECONDS, assertAudioFileName, parseTranscriptionRequest, type AudioTask, type FormFields } from './transcription-request.js';

export const AUDIO_ROUTES: Record<AudioTask, string> = {
  transcribe: '/v1/audio/transcriptions',
  translate: '/v1/audio/translations',
};

/** The uploaded file, streamed to a temporary file by the HTTP layer. */
export interface AudioUpload {
  path: string;
  filename: string | undefined;
  bytes: number;
}

export interface TranscriptionServiceDeps {
  registry: ModelRegistry;
  decoder: AudioDecoder;
  /** Called with the seconds of audio of every billed call (metrics). */
  onAudio?: (model: string, route: string, seconds: number) => void;
}

/** Encoder positions per second of audio (what input tokens count). */
const TOKENS_PER_AUDIO_SECOND = 50;
/** Tokens Whisper may decode per 30-second window. */
const MAX_TOKENS_PER_WINDOW = 224;

/**
 * The audio is decoded only once admitted, so the reservation assumes the longest clip
 * accepted: the duration is not known before decoding.
 */
function worstCase(model: string, route: string, requestId: string, prompt: string | null | undefined): MeteredCall {
  return {
    model,
    route,
    requestId,
    inputTokens: TOKENS_PER_AUDIO_SECOND * MAX_AUDIO_SECONDS + Buffer.byteLength(prompt ?? '', 'utf8'),
    maxOutputTokens: Math.ceil(MAX_AUDIO_SECONDS / 30) * MAX_TOKENS_PER_WINDOW,
  };
}

export class TranscriptionService {
  constructor(private readonly deps: TranscriptionServiceDeps) {}

  async run(caller: Caller, task: AudioTask, fields: FormFields, upload: AudioUpload | null, context: CallContext): Promise<RenderedTranscription> {
    const request = parseTranscriptionRequest(fields, task);
    const { registry } = this.deps;
    const model = registry.require(request.model, task === 'translate' ? 'translations' : 'transcriptions');
    if (!upload) throw invalidRequest('file is required', 'file');
    assertAudioFileName(upload.filename);
    if (upload.bytes === 0) throw invalidRequest('The audio file is empty', 'file', 'invalid_audio');
    const backend = await registry.backendFor(model, 'transcribe');
    const route = AUDIO_ROUTES[task];
    const { audio, output } = await meteredCall(caller, worstCase(model.id, route, context.requestId, request.prompt), async () => {
      const audio = await this.deps.decoder.decode(upload.path, MAX_AUDIO_SECONDS);
      const output = await backend.transcribe!({
        ...context,
        model,
        audio: audio.samples,
        task,
        language: request.language,
        prompt: request.prompt,
        temperature: request.temperature,
        wordTimestamps: request.words,
      });
      return { value: { audio, output }, usage: { inputTokens: output.usage.inputTokens, outputTokens: output.usage.outputTokens, status: 200 } };
    });
    this.deps.onAudio?.(model.id, route, audio.seconds);
    return renderTranscription(output, request);
  }
}
