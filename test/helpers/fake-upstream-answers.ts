/** The fake upstream's canned answers (deterministic): chat completions and chunks, embeddings, moderation scores. */

export interface ChatAnswer {
  content: string;
  reasoning?: string | null;
  finishReason?: string;
  /** Usage in the upstream's wire shape; `null` omits `usage` from the answer entirely. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number; reasoning_tokens?: number } | null;
  model?: string;
  /** Delay before answering (before the first chunk when streaming). */
  delayMs?: number;
}

export const DEFAULT_CHAT: Required<Omit<ChatAnswer, 'usage'>> & { usage: NonNullable<ChatAnswer['usage']> } = {
  content: 'Hello from the fake upstream.',
  reasoning: null,
  finishReason: 'stop',
  usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  model: 'fake-model',
  delayMs: 0,
};

export function wordsOf(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

export function wireUsage(usage: NonNullable<ChatAnswer['usage']>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
  if (usage.reasoning_tokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoning_tokens };
  return out;
}

export function chatCompletionBody(answer: ChatAnswer, requestedModel: string, sequence: number): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: answer.content };
  if (answer.reasoning) message.reasoning_content = answer.reasoning;
  return {
    id: `chatcmpl-fake${sequence}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: answer.model ?? requestedModel,
    choices: [{ index: 0, message, finish_reason: answer.finishReason ?? 'stop' }],
    ...(answer.usage === null ? {} : { usage: wireUsage(answer.usage ?? DEFAULT_CHAT.usage) }),
  };
}

/** One `chat.completion.chunk`: a string is a content delta, an object is merged in as-is. */
export function streamChunk(model: string, chunk: string | Record<string, unknown>): Record<string, unknown> {
  const base = { id: 'chatcmpl-fakestream', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  return typeof chunk === 'string' ? { ...base, choices: [{ index: 0, delta: { content: chunk }, finish_reason: null }] } : { ...base, ...chunk };
}

/** A deterministic vector per text: the same text always gives the same numbers. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, i) => Number((((h >>> (i % 24)) % 1000) / 1000 - 0.5).toFixed(6)));
}

export const MODERATION_CATEGORIES = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent',
  'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
] as const;

/** Moderation scores: `violence` is 0.9 when the text contains "kill", every other score 0.01. */
export function fakeModeration(text: string) {
  const scores: Record<string, number> = {};
  const flags: Record<string, boolean> = {};
  for (const c of MODERATION_CATEGORIES) {
    scores[c] = c === 'violence' && /kill/i.test(text) ? 0.9 : 0.01;
    flags[c] = scores[c]! >= 0.5;
  }
  return { flagged: Object.values(flags).some(Boolean), categories: flags, category_scores: scores };
}
