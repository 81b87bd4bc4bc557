/**
 * POST /v1/audio/transcriptions and /v1/audio/translations: validate the form, check
 * the model and the balance, decode the uploaded file (already on disk) to 16 kHz mono,
 * run the speech model, meter and bill, render the requested format.
 */
import type { Caller } from '../identity/caller.js';
import { admitCall, runAdmitted, type Admission, type MeteredCall } from '../billing/meter.js';
import { invalidRequest, isAppError } from '../shared/errors.js';
import { costMicros } from '../shared/money.js';
import type { ModelSpec } from '../models/model-spec.types.js';
import type { CallContext } from '../models/inference-backend.port.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import type { AudioDecoder, DecodedAudio } from './audio-decoder.port.js';
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
  registry: ModelResolver;
  decoder: AudioDecoder;
  /** Called with the seconds of audio of every billed call (metrics). */
  onAudio?: (model: string, route: string, seconds: number) => void;
}

/** Encoder positions per second of audio (what input tokens count). */
const TOKENS_PER_AUDIO_SECOND = 50;
/** Tokens Whisper may decode per 30-second window. */
const MAX_TOKENS_PER_WINDOW = 224;

/**
 * The estimate of `seconds` of audio: its encoder positions and prompt in, every window's
 * tokens out. A fixed figure: the caller sets no output cap here, so none is lowered.
 */
function clipCall(model: ModelSpec, route: string, requestId: string, prompt: string | null | undefined, seconds: number): MeteredCall {
  const inputTokens = TOKENS_PER_AUDIO_SECOND * Math.ceil(seconds) + Buffer.byteLength(prompt ?? '', 'utf8');
  const maxOutputTokens = Math.ceil(seconds / 30) * MAX_TOKENS_PER_WINDOW;
  return { model: model.id, route, requestId, inputTokens, maxOutputTokens, estimateMicros: costMicros(model.price, inputTokens, maxOutputTokens) };
}

export class TranscriptionService {
  constructor(private readonly deps: TranscriptionServiceDeps) {}

  /** `context.route`: where the call came from, for its usage record (default: the REST route). */
  async run(
    caller: Caller,
    task: AudioTask,
    fields: FormFields,
    upload: AudioUpload | null,
    context: CallContext & { route?: string },
  ): Promise<RenderedTranscription> {
    const request = parseTranscriptionRequest(fields, task);
    const { registry } = this.deps;
    const model = registry.require(request.model, task === 'translate' ? 'translations' : 'transcriptions');
    if (!upload) throw invalidRequest('file is required', 'file');
    assertAudioFileName(upload.filename);
    if (upload.bytes === 0) throw invalidRequest('The audio file is empty', 'file', 'invalid_audio');
    const backend = await registry.backendFor(model, 'transcribe');
    const route = context.route ?? AUDIO_ROUTES[task];
    const clip = (seconds: number) => clipCall(model, route, context.requestId, request.prompt, seconds);
    const admitted = await this.#admit(caller, clip, upload.path);
    const { audio, output } = await runAdmitted(caller, admitted.admission, async () => {
      const audio = admitted.audio ?? (await this.deps.decoder.decode(upload.path, MAX_AUDIO_SECONDS));
      const output = await backend.transcribe!({
        requestId: context.requestId,
        signal: context.signal,
        ...(context.onServed ? { onServed: context.onServed } : {}),
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

  /**
   * The duration is not known before decoding, so the call first holds the longest clip
   * accepted. When the credit does not cover that, the file (already on disk, and within
   * the upload limit) is decoded first and the call holds what its own duration may cost:
   * a short clip on a low balance is served rather than refused.
   */
  async #admit(caller: Caller, clip: (seconds: number) => MeteredCall, file: string): Promise<{ admission: Admission; audio: DecodedAudio | null }> {
    try {
      return { admission: await admitCall(caller, clip(MAX_AUDIO_SECONDS)), audio: null };
    } catch (err) {
      if (!isAppError(err) || err.kind !== 'insufficient_quota') throw err;
    }
    const audio = await this.deps.decoder.decode(file, MAX_AUDIO_SECONDS);
    return { admission: await admitCall(caller, clip(audio.seconds)), audio };
  }
}
