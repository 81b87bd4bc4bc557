/**
 * POST /v1/audio/transcriptions and /v1/audio/translations: validate the form, check
 * the model and the balance, decode the uploaded file (already on disk) to 16 kHz mono,
 * run the speech model, meter and bill, render the requested format.
 */
import type { Principal } from '../auth/authenticator.js';
import type { BillingService } from '../billing/billing.service.js';
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
  billing: BillingService;
  decoder: AudioDecoder;
  /** Called with the seconds of audio of every billed call (metrics). */
  onAudio?: (model: string, route: string, seconds: number) => void;
}

export class TranscriptionService {
  constructor(private readonly deps: TranscriptionServiceDeps) {}

  async run(principal: Principal, task: AudioTask, fields: FormFields, upload: AudioUpload | null, context: CallContext): Promise<RenderedTranscription> {
    const request = parseTranscriptionRequest(fields, task);
    const { registry, billing } = this.deps;
    const model = registry.require(request.model, task === 'translate' ? 'translations' : 'transcriptions');
    if (!upload) throw invalidRequest('file is required', 'file');
    assertAudioFileName(upload.filename);
    if (upload.bytes === 0) throw invalidRequest('The audio file is empty', 'file', 'invalid_audio');
    const backend = await registry.backendFor(model, 'transcribe');
    await billing.assertCanSpend(principal.projectId);
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
    const route = AUDIO_ROUTES[task];
    await billing.record({
      principal,
      model: model.id,
      route,
      inputTokens: output.usage.inputTokens,
      outputTokens: output.usage.outputTokens,
      requestId: context.requestId,
      status: 200,
    });
    this.deps.onAudio?.(model.id, route, audio.seconds);
    return renderTranscription(output, request);
  }
}
