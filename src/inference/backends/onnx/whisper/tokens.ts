/**
 * Whisper's special token ids, read from generation_config.json where the export has
 * it and otherwise from the tokenizer by token text: start/end of transcript, task and
 * language tokens, the no-speech and no-timestamps tokens, and where the timestamp
 * tokens (<|0.00|> … <|30.00|>, 0.02 s apart) begin.
 */
import type { TextTokenizer } from '../tokenizer.js';

export interface WhisperGenerationConfig {
  decoder_start_token_id?: number;
  eos_token_id?: number;
  no_timestamps_token_id?: number;
  prev_sot_token_id?: number;
  lang_to_id?: Record<string, number>;
  task_to_id?: Record<string, number>;
  suppress_tokens?: number[];
  begin_suppress_tokens?: number[];
  max_initial_timestamp_index?: number;
  max_length?: number;
}

export interface WhisperTokens {
  eot: number;
  sot: number;
  transcribe: number;
  translate: number;
  startOfPrev: number;
  noSpeech: number;
  noTimestamps: number;
  timestampBegin: number;
  /** ISO-639-1 code → token id, for the languages this model knows. */
  languages: Map<string, number>;
  /** Never sampled: the generation config's list plus the control tokens. */
  suppress: number[];
  /** Not allowed as the first sampled token (a bare space, end of text). */
  beginSuppress: number[];
  maxInitialTimestampIndex: number;
}

function need(tokenizer: TextTokenizer, token: string): number {
  const id = tokenizer.idOf(token);
  if (id === undefined) throw new Error(`the Whisper tokenizer has no ${token} token`);
  return id;
}

export function whisperTokens(tokenizer: TextTokenizer, gen: WhisperGenerationConfig): WhisperTokens {
  const noTimestamps = gen.no_timestamps_token_id ?? need(tokenizer, '<|notimestamps|>');
  const languages = new Map<string, number>();
  for (const [token, id] of Object.entries(gen.lang_to_id ?? {})) languages.set(token.replace(/^<\|(.*)\|>$/, '$1'), id);
  if (languages.size === 0) {
    // Older exports have no lang_to_id: language tokens sit between <|startoftranscript|> and <|translate|>.
    const from = need(tokenizer, '<|startoftranscript|>') + 1;
    const to = need(tokenizer, '<|translate|>');
    for (let id = from; id < to; id++) {
      const token = tokenizer.inner.id_to_token(id);
      if (token) languages.set(token.replace(/^<\|(.*)\|>$/, '$1'), id);
    }
  }
  const t: Omit<WhisperTokens, 'suppress'> = {
    eot: gen.eos_token_id ?? need(tokenizer, '<|endoftext|>'),
    sot: gen.decoder_start_token_id ?? need(tokenizer, '<|startoftranscript|>'),
    transcribe: gen.task_to_id?.transcribe ?? need(tokenizer, '<|transcribe|>'),
    translate: gen.task_to_id?.translate ?? need(tokenizer, '<|translate|>'),
    startOfPrev: gen.prev_sot_token_id ?? need(tokenizer, '<|startofprev|>'),
    noSpeech: tokenizer.idOf('<|nocaptions|>') ?? need(tokenizer, '<|nospeech|>'),
    noTimestamps,
    timestampBegin: noTimestamps + 1,
    languages,
    beginSuppress: gen.begin_suppress_tokens ?? [],
    maxInitialTimestampIndex: gen.max_initial_timestamp_index ?? 50,
  };
  const startOfLm = tokenizer.idOf('<|startoflm|>');
  const control = [t.sot, t.transcribe, t.translate, t.startOfPrev, t.noSpeech, t.noTimestamps, ...languages.values()];
  if (startOfLm !== undefined) control.push(startOfLm);
  return { ...t, suppress: [...new Set([...(gen.suppress_tokens ?? []), ...control])] };
}
