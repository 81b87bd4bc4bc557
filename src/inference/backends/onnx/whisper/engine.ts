/**
 * Whisper speech recognition and English translation over an onnx-community export:
 * the audio is cut into 30-second windows that follow the model's own timestamps (each
 * window starts where the last one's speech ended), every window is encoded once and
 * decoded with the key/value cache, and the text of earlier windows conditions the next.
 */
import type { TranscriptionOutput, TranscriptionParams, TranscriptionSegment, TranscriptionWord } from '../../../../domain/models/inference-backend.port.js';
import type { OrtRuntime, OrtSession } from '../../../runtime/ort-runtime.js';
import { invalidRequest } from '../../../../domain/shared/errors.js';
import { findAnyGraph, findGraph, readJson, requireJson } from '../loader.js';
import { TextTokenizer } from '../tokenizer.js';
import { DecoderRun } from '../seq2seq.js';
import { throwIfAborted } from '../errors.js';
import { LogMel, WHISPER_MEL } from './features.js';
import { whisperTokens, type WhisperGenerationConfig, type WhisperTokens } from './tokens.js';
import { decodeWindow, defineWhisperDecoding, detectLanguage, type DecodedWindow } from './decode.js';
import { compressionRatio, round, splitWindow, wordTimings } from './segments.js';

interface WhisperConfig {
  d_model: number;
  decoder_attention_heads: number;
  max_target_positions?: number;
  num_mel_bins?: number;
}

/** openai/whisper: skip a window the model thinks is silent and could not decode confidently. */
const NO_SPEECH_THRESHOLD = 0.6;
const LOGPROB_THRESHOLD = -1;
/** Encoder positions per second of audio: what the input side of usage counts. */
const AUDIO_TOKENS_PER_SECOND = 50;

/** Where the time of the transcriptions so far went (benchmarks, diagnostics). */
export interface WhisperTimings {
  windows: number;
  /** Decoder runs (the first run of a window reads its whole prefix). */
  decoderRuns: number;
  featuresMs: number;
  encoderMs: number;
  decoderMs: number;
}

export class WhisperEngine {
  readonly timings: WhisperTimings = { windows: 0, decoderRuns: 0, featuresMs: 0, encoderMs: 0, decoderMs: 0 };

  private constructor(
    private readonly runtime: OrtRuntime,
    private readonly encoder: OrtSession,
    private readonly decoder: OrtSession,
    readonly tokenizer: TextTokenizer,
    private readonly tokens: WhisperTokens,
    private readonly config: WhisperConfig,
    private readonly mel: LogMel,
  ) {}

  static async load(runtime: OrtRuntime, dir: string): Promise<WhisperEngine> {
    const config = await requireJson<WhisperConfig>(dir, 'config.json');
    const generation = (await readJson<WhisperGenerationConfig>(dir, 'generation_config.json')) ?? {};
    const pre = (await readJson<{ feature_size?: number; n_fft?: number; hop_length?: number; n_samples?: number }>(dir, 'preprocessor_config.json')) ?? {};
    const tokenizer = await TextTokenizer.fromDir(dir);
    const encoderFile = await findGraph(dir, 'encoder_model');
    const decoderFile = await findAnyGraph(dir, ['decoder_model_merged', 'decoder_model']);
    if (!encoderFile || !decoderFile) throw new Error(`encoder/decoder graphs are missing in ${dir}`);
    const mel = new LogMel({
      ...WHISPER_MEL,
      nMels: pre.feature_size ?? config.num_mel_bins ?? WHISPER_MEL.nMels,
      nFft: pre.n_fft ?? WHISPER_MEL.nFft,
      hop: pre.hop_length ?? WHISPER_MEL.hop,
      nSamples: pre.n_samples ?? WHISPER_MEL.nSamples,
    });
    defineWhisperDecoding(runtime);
    const encoder = await runtime.load(encoderFile);
    // The decoder reads the encoder output retained in the worker: same worker.
    const decoder = await runtime.load(decoderFile, { colocateWith: encoder });
    return new WhisperEngine(runtime, encoder, decoder, tokenizer, whisperTokens(tokenizer, generation), config, mel);
  }

  get sessions(): OrtSession[] {
    return [this.encoder, this.decoder];
  }

  async transcribe(params: TranscriptionParams): Promise<TranscriptionOutput> {
    if (params.language && !this.tokens.languages.has(params.language)) {
      throw invalidRequest(`Language "${params.language}" is not supported by model ${params.model.id}`, 'language');
    }
    const run = new DecoderRun(this.runtime, this.decoder, {
      heads: this.config.decoder_attention_heads,
      headDim: this.config.d_model / this.config.decoder_attention_heads,
    });
    try {
      return await this.decodeAll(run, params);
    } finally {
      await run.close();
    }
  }

  private async decodeAll(run: DecoderRun, params: TranscriptionParams): Promise<TranscriptionOutput> {
    const { hop, nSamples } = this.mel.options;
    const t = this.tokens;
    const duration = params.audio.length / this.mel.options.samplingRate;
    const totalFrames = Math.ceil(params.audio.length / hop);
    const maxPositions = this.config.max_target_positions ?? 448;
    const initialPrompt = params.prompt ? this.tokenizer.ids(` ${params.prompt.trim()}`) : [];
    const context: number[] = [...initialPrompt];
    const segments: TranscriptionSegment[] = [];
    const words: TranscriptionWord[] = [];
    let language = params.language;
    let generated = 0;
    for (let seek = 0; seek < totalFrames; ) {
      throwIfAborted(params.signal);
      const windowFrames = Math.min(this.mel.frames, totalFrames - seek);
      let started = performance.now();
      const features = await this.mel.compute(params.audio.subarray(seek * hop, seek * hop + nSamples));
      this.timings.featuresMs += performance.now() - started;
      started = performance.now();
      await run.encode(this.encoder, { input_features: { type: 'float32', dims: [1, this.mel.options.nMels, this.mel.frames], data: features } });
      this.timings.encoderMs += performance.now() - started;
      started = performance.now();
      language ??= await detectLanguage(run, t);
      const sotSequence = [t.sot, t.languages.get(language)!, params.task === 'translate' ? t.translate : t.transcribe];
      const prompt = context.slice(-(Math.floor(maxPositions / 2) - 1));
      const prefix = prompt.length > 0 ? [t.startOfPrev, ...prompt, ...sotSequence] : sotSequence;
      const maxTokens = Math.min(Math.floor(maxPositions / 2), maxPositions - prefix.length);
      const window = await decodeWindow(this.runtime, run, prefix, prefix.length - sotSequence.length, t, {
        temperature: params.temperature,
        maxTokens,
        signal: params.signal,
      }).catch((err: unknown) => {
        throwIfAborted(params.signal);
        throw err;
      });
      this.timings.decoderMs += performance.now() - started;
      this.timings.decoderRuns += window.steps;
      this.timings.windows++;
      generated += window.tokens.length + 1;
      if (window.noSpeechProb > NO_SPEECH_THRESHOLD && window.avgLogprob < LOGPROB_THRESHOLD) {
        seek += windowFrames;
        continue;
      }
      const consumed = this.addSegments(window, { seek, windowFrames, duration }, params, segments, words);
      context.push(...window.tokens.filter((id) => id < t.eot));
      seek += consumed;
    }
    const audioTokens = Math.ceil(duration * AUDIO_TOKENS_PER_SECOND);
    return {
      text: segments.map((s) => s.text).join('').trim(),
      language: language ?? 'en',
      duration: round(duration),
      segments,
      words: params.wordTimestamps ? words : null,
      usage: { inputTokens: audioTokens + initialPrompt.length, outputTokens: generated },
    };
  }

  /** Turns one decoded window into segments (and words); returns the mel frames it consumed. */
  private addSegments(
    window: DecodedWindow,
    at: { seek: number; windowFrames: number; duration: number },
    params: TranscriptionParams,
    segments: TranscriptionSegment[],
    words: TranscriptionWord[],
  ): number {
    const { pieces, consumed } = splitWindow(window.tokens, this.tokens.timestampBegin, at.windowFrames);
    const offset = at.seek / 100;
    const ratio = compressionRatio(this.text(window.tokens));
    for (const piece of pieces) {
      const text = this.text(piece.tokens);
      if (text.trim() === '') continue;
      const start = round(Math.min(at.duration, offset + piece.start));
      const end = round(Math.min(at.duration, Math.max(offset + piece.end, offset + piece.start)));
      segments.push({
        id: segments.length,
        seek: at.seek,
        start,
        end,
        text,
        tokens: piece.tokens,
        temperature: params.temperature,
        avgLogprob: window.avgLogprob,
        compressionRatio: ratio,
        noSpeechProb: window.noSpeechProb,
      });
      if (params.wordTimestamps) words.push(...wordTimings(this.tokenPieces(piece.tokens), start, end));
    }
    return consumed;
  }

  private text(tokens: readonly number[]): string {
    return this.tokenizer.decode(tokens.filter((id) => id < this.tokens.eot), true);
  }

  private tokenPieces(tokens: readonly number[]): string[] {
    return tokens.filter((id) => id < this.tokens.eot).map((id) => this.tokenizer.decode([id], true));
  }

  countTokens(text: string): number {
    return this.tokenizer.ids(text).length;
  }
}
