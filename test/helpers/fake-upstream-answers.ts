/** The fake upstream's canned answers (deterministic): chat completions and chunks, embeddings, moderation scores. */

export interface ChatAnswer {
  content: string;
  reasoning?: string | null;
  finishReason?: string;
  /** Usage in the upstream's wire shape; `null` omits `usage` from the answer entirely. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number; reasoning_tokens?: number; cached_tokens?: number } | null;
  model?: string;
  /** Delay before answering (before the first chunk when streaming). */
  delayMs?: number;
  /** Function calls to answer with (content null, finish_reason `tool_calls`); streamed as tool-call deltas. */
  toolCalls?: FakeToolCall[];
}

export interface FakeToolCall {
  id: string;
  name: string;
  /** The JSON arguments; streamed in two halves. */
  arguments: string;
}

export const DEFAULT_CHAT: Required<Omit<ChatAnswer, 'usage' | 'toolCalls'>> & { usage: NonNullable<ChatAnswer['usage']> } = {
  content: 'Hello from the fake upstream.',
  reasoning: null,
  finishReason: 'stop',
  usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  model: 'fake-model',
  delayMs: 0,
};

/** The fingerprint the fake reports on every answer, to show it is carried through. */
export const FAKE_FINGERPRINT = 'fp_fake_engine';

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
  // vLLM and SGLang report prompt-cache hits here (OpenAI too).
  if (usage.cached_tokens !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return out;
}

const wireToolCall = (call: FakeToolCall) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } });

/**
 * Logprobs as an engine reports them when the request set `logprobs`: one entry per word
 * of the content, the chosen word at -0.25, `top_logprobs` alternatives below it.
 */
export function fakeLogprobs(content: string, top: number) {
  return {
    content: wordsOf(content).map((token) => ({
      token,
      logprob: -0.25,
      bytes: null,
      top_logprobs: Array.from({ length: top }, (_, i) => ({ token: i === 0 ? token : `${token}#${i}`, logprob: -0.25 - i, bytes: null })),
    })),
  };
}

/** How many choices a request asked for (`n`, default 1). */
export const choicesAsked = (request: any): number => (typeof request?.n === 'number' && request.n > 1 ? request.n : 1);

/** The answer as the engine writes it: `n` choices (numbered in their content when several), logprobs when asked for. */
export function chatCompletionBody(answer: ChatAnswer, request: any, sequence: number): Record<string, unknown> {
  const n = choicesAsked(request);
  const choices = Array.from({ length: n }, (_, index) => {
    const content = n > 1 ? `${answer.content} (${index + 1})` : answer.content;
    const message: Record<string, unknown> = { role: 'assistant', content };
    if (answer.reasoning) message.reasoning_content = answer.reasoning;
    if (answer.toolCalls) Object.assign(message, { content: null, tool_calls: answer.toolCalls.map(wireToolCall) });
    const choice: Record<string, unknown> = { index, message, finish_reason: answer.toolCalls ? 'tool_calls' : (answer.finishReason ?? 'stop') };
    if (request?.logprobs === true) choice.logprobs = fakeLogprobs(content, request.top_logprobs ?? 0);
    return choice;
  });
  return {
    id: `chatcmpl-fake${sequence}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: answer.model ?? String(request?.model ?? 'unknown'),
    choices,
    system_fingerprint: FAKE_FINGERPRINT,
    ...(answer.usage === null ? {} : { usage: wireUsage(answer.usage ?? DEFAULT_CHAT.usage) }),
  };
}

/** The stream of a tool-call answer: each call's id and name first, then its arguments in two halves (by `index`). */
export function toolCallDeltas(calls: readonly FakeToolCall[]): Record<string, unknown>[] {
  const chunks: Record<string, unknown>[] = [];
  calls.forEach((call, index) => {
    const half = Math.floor(call.arguments.length / 2);
    const delta = (toolCall: Record<string, unknown>) => ({ choices: [{ index: 0, delta: { tool_calls: [{ index, ...toolCall }] }, finish_reason: null }] });
    chunks.push(delta({ id: call.id, type: 'function', function: { name: call.name, arguments: '' } }));
    chunks.push(delta({ function: { arguments: call.arguments.slice(0, half) } }));
    chunks.push(delta({ function: { arguments: call.arguments.slice(half) } }));
  });
  return chunks;
}

/** One `chat.completion.chunk`: a string is a content delta, an object is merged in as-is. */
export function streamChunk(model: string, chunk: string | Record<string, unknown>): Record<string, unknown> {
  const base = { id: 'chatcmpl-fakestream', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: FAKE_FINGERPRINT };
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

/**
 * A legacy text completion as an engine writes it: one choice per prompt and `n`, the
 * default answer's text (numbered when several), `echo` prepends the prompt.
 */
export function textCompletionBody(answer: ChatAnswer, request: any, sequence: number): Record<string, unknown> {
  const prompts: unknown[] = Array.isArray(request?.prompt) ? request.prompt : [request?.prompt];
  const n = choicesAsked(request);
  const choices: Record<string, unknown>[] = [];
  prompts.forEach((prompt, p) => {
    for (let i = 0; i < n; i++) {
      const text = `${request?.echo === true ? String(prompt) : ''}${answer.content}${prompts.length * n > 1 ? ` (${p * n + i + 1})` : ''}`;
      choices.push({ index: p * n + i, text, logprobs: null, finish_reason: answer.finishReason ?? 'stop' });
    }
  });
  return {
    id: `cmpl-fake${sequence}`,
    object: 'text_completion',
    created: 1_700_000_000,
    model: String(request?.model ?? 'unknown'),
    choices,
    system_fingerprint: FAKE_FINGERPRINT,
    ...(answer.usage === null ? {} : { usage: wireUsage(answer.usage ?? DEFAULT_CHAT.usage) }),
  };
}
