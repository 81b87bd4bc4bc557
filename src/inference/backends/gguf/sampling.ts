/**
 * The request's sampling fields as node-llama-cpp's generation options, the same for a
 * plain completion (generate.ts) and a chat with functions (functions.ts), and what a
 * generation streams.
 */
import type { ToolCallOut } from '../../../domain/models/inference-backend.port.js';
import type { CompletionOptions } from './llama-api.js';

/** Sampling defaults for small on-device chat models when the request sets none. */
const DEFAULT_TEMPERATURE = 0.3;
const DEFAULT_MIN_P = 0.15;

interface Sampling {
  maxTokens: number | undefined;
  temperature: number;
  topP: number | undefined;
  seed: number | undefined;
  stop: string[];
  frequencyPenalty: number | undefined;
  presencePenalty: number | undefined;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function readSampling(s: Record<string, unknown>): Sampling {
  const stop = typeof s.stop === 'string' ? [s.stop] : Array.isArray(s.stop) ? s.stop.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  return {
    maxTokens: num(s.max_completion_tokens) ?? num(s.max_tokens) ?? num(s.max_output_tokens),
    temperature: num(s.temperature) ?? DEFAULT_TEMPERATURE,
    topP: num(s.top_p),
    seed: num(s.seed),
    stop,
    frequencyPenalty: num(s.frequency_penalty),
    presencePenalty: num(s.presence_penalty),
  };
}

/** The generation options of a request whose prompt is `promptTokens` long in a context of `contextSize`. */
export function generationOptions(fields: Record<string, unknown>, promptTokens: number, contextSize: number, signal: AbortSignal): CompletionOptions {
  const sampling = readSampling(fields);
  const room = contextSize - promptTokens;
  const penalties = sampling.frequencyPenalty || sampling.presencePenalty;
  return {
    maxTokens: Math.max(1, Math.min(sampling.maxTokens ?? room, room)),
    temperature: sampling.temperature,
    minP: sampling.temperature > 0 ? DEFAULT_MIN_P : undefined,
    topP: sampling.topP,
    seed: sampling.seed,
    customStopTriggers: sampling.stop.length > 0 ? sampling.stop : undefined,
    repeatPenalty: penalties ? { frequencyPenalty: sampling.frequencyPenalty, presencePenalty: sampling.presencePenalty } : undefined,
    signal,
  };
}

/** What a generation streams: text split into answer and reasoning, or (at its end) the tool calls it made. */
export interface GgufDelta {
  content?: string;
  reasoning?: string;
  toolCalls?: ToolCallOut[];
}
