/**
 * Chat completion wire objects: the full `chat.completion` and the stream's
 * `chat.completion.chunk`s. An upstream's answer is relayed as sent (its choices and
 * fields, every choice and index), with OpenAI's fields filled in where it left them out:
 * the one writer that reads the engine's raw choices rather than the answer reader's
 * events (domain/completions/answer-reader.ts).
 */
import { randomString } from '../../domain/shared/ids.js';
import type { CarriedAnswer, ChatStreamEvent, TokenUsage, ToolCallOut } from '../../domain/models/inference-backend.port.js';
import type { ChatResult } from '../../domain/completions/chat-runner.js';

export const newChatCompletionId = (): string => `chatcmpl-${randomString(15, 'base64url')}`;

export function chatUsageWire(usage: TokenUsage) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoningTokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

type Json = Record<string, unknown>;

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `reasoning` beside an engine's `reasoning_content`, as Sluice's other runtimes name it. */
function withReasoning(fields: Json): Json {
  const sent = fields.reasoning_content;
  return fields.reasoning === undefined && typeof sent === 'string' && sent !== '' ? { ...fields, reasoning: sent } : fields;
}

/**
 * An engine's choice as sent, with the fields OpenAI's clients expect filled in where the
 * engine left them out. Object.assign, not a literal that spreads and then adds
 * properties: V8 builds such a literal key by key on every call, where Object.assign
 * copies onto the shape it already has (measured in bench/RESULTS.md, the hotpath
 * section); the keys come out in the same order.
 */
function carriedChoice(choice: Json, position: number): Json {
  const sent = isJson(choice.message) ? choice.message : {};
  const message = withReasoning(Object.assign({ role: 'assistant', content: null, refusal: null, annotations: [] }, sent));
  return Object.assign({}, choice, { index: choice.index ?? position, message, logprobs: choice.logprobs ?? null, finish_reason: choice.finish_reason ?? 'stop' });
}

/** Tool calls in OpenAI's wire shape (`index` on stream deltas). */
const toolCallsWire = (calls: readonly ToolCallOut[], indexed: boolean): Json[] =>
  calls.map((c, index) => ({ ...(indexed ? { index } : {}), id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));

function ownChoice(result: ChatResult): Json {
  const message: Json = { role: 'assistant', content: result.content, refusal: null, annotations: [] };
  if (result.reasoning !== null) message.reasoning = result.reasoning;
  if (result.toolCalls?.length) {
    // Text the model wrote before its calls stays beside them, as OpenAI's answers can have it.
    message.content = result.content === '' ? null : result.content;
    message.tool_calls = toolCallsWire(result.toolCalls, false);
  }
  return { index: 0, message, logprobs: null, finish_reason: result.finishReason };
}

/** `result.carried`: an upstream's answer, whose choices and other fields go out as sent; id, model and usage are Sluice's. */
export function chatCompletionWire(id: string, created: number, model: string, result: ChatResult): Json {
  const { carried } = result;
  const choices = carried && carried.choices.length > 0 ? carried.choices.map(carriedChoice) : [ownChoice(result)];
  const wire: Json = { id, object: 'chat.completion', created, model, choices, usage: chatUsageWire(result.usage), system_fingerprint: null, service_tier: 'default' };
  if (carried) Object.assign(wire, carried.fields);
  return wire;
}

/**
 * An engine's stream choice as sent, with OpenAI's fields filled in where it left them
 * out (`logprobs`, `finish_reason`; the role on the first chunk, as OpenAI's names it).
 */
function carriedDelta(choice: Json, first: boolean): Json {
  const sent = isJson(choice.delta) ? choice.delta : {};
  const delta = withReasoning(first && sent.role === undefined ? Object.assign({ role: 'assistant' }, sent) : sent);
  return Object.assign({ index: 0 }, choice, { delta, logprobs: choice.logprobs ?? null, finish_reason: choice.finish_reason ?? null });
}

/** Builds the chunks of one stream; ids, timestamps and the model are fixed for its lifetime. */
export class ChunkWriter {
  #first = true;

  constructor(
    private readonly id: string,
    private readonly created: number,
    private readonly model: string,
    /** With `include_usage`, every chunk carries `usage: null` and a final chunk carries the usage (OpenAI's shape). */
    private readonly includeUsage: boolean,
  ) {}

  delta(content: string | undefined, reasoning: string | undefined, toolCalls?: readonly ToolCallOut[]): Record<string, unknown> {
    const delta: Record<string, unknown> = {};
    if (this.#first) {
      delta.role = 'assistant';
      this.#first = false;
    }
    if (content !== undefined) delta.content = content;
    if (reasoning !== undefined) delta.reasoning = reasoning;
    if (toolCalls?.length) delta.tool_calls = toolCallsWire(toolCalls, true);
    return this.#chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]);
  }

  /** An upstream's chunk: its choices (deltas with tool calls, logprobs, several indexes) and fields as sent. */
  carried(carried: CarriedAnswer): Record<string, unknown> {
    const first = this.#first;
    this.#first = false;
    const choices = carried.choices.map((choice) => carriedDelta(choice, first));
    const chunk = this.#chunk(choices);
    Object.assign(chunk, carried.fields);
    return chunk;
  }

  /** One event of the chat call's stream as its chunk (its last, the usage billed: a chunk only with `include_usage`). */
  event(event: ChatStreamEvent): Record<string, unknown> | null {
    if (event.type === 'chunk') return this.carried(event.carried);
    if (event.type === 'delta') return this.delta(event.content, event.reasoning, event.toolCalls);
    if (event.type === 'finish') return this.finish(event.finishReason);
    return this.includeUsage ? this.usage(event.usage) : null;
  }

  finish(reason: string): Record<string, unknown> {
    return this.#chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: reason }]);
  }

  usage(usage: TokenUsage): Record<string, unknown> {
    const chunk = this.#chunk([]);
    chunk.usage = chatUsageWire(usage);
    return chunk;
  }

  #chunk(choices: unknown[]): Record<string, unknown> {
    const chunk: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      system_fingerprint: null,
      service_tier: 'default',
      choices,
    };
    if (this.includeUsage) chunk.usage = null;
    return chunk;
  }
}
