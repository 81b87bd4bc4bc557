/**
 * The Messages wire's writer: what an engine answered (the answer reader's semantic
 * events) as Anthropic's content blocks, both as the stream's events and as the message
 * they add up to, so a streamed and a whole answer are built by one code path.
 *
 * Block discipline: a block's type never changes; when the answer moves from thinking to
 * text to a tool call, the open block is stopped and the next one started, with dense,
 * ordered indexes. A thinking block ends with its `signature_delta`: the provider's own
 * signature when the engine sent one (an anthropic-protocol upstream), else Sluice's
 * (thinking-signature.ts); a provider's redacted_thinking block is returned as sent.
 * With `thinking.display: "omitted"` (Anthropic's reference: the thinking field is empty,
 * the signature kept, and a stream sends no `thinking_delta`), a thinking block is started
 * and signed with its text left out; its signature is over the empty text it carries, so it
 * verifies when the block comes back (earlier thinking never reaches an engine either way).
 * Stop reasons: the engine's `stop` is `end_turn`, or `stop_sequence` with the sequence
 * when the engine says which one matched (vLLM's `stop_reason`); `length` is `max_tokens`;
 * `tool_calls` (or `stop` beside tool calls, as engines often say) is `tool_use`;
 * `content_filter`, or a refusal, is `refusal`.
 */
import { readResult, readStreamEvent, type AnswerEvent } from '../../domain/completions/answer-reader.js';
import type { ChatResult } from '../../domain/completions/chat-runner.js';
import type { ChatStreamEvent, TokenUsage } from '../../domain/models/inference-backend.port.js';
import { randomString } from '../../domain/shared/ids.js';
import type { ThinkingSigner } from './thinking-signature.js';

type Json = Record<string, unknown>;

export const newMessageId = (): string => `msg_${randomString(24, 'base64url')}`;
const newToolUseId = (): string => `toolu_${randomString(24, 'base64url')}`;

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

const STOP_REASONS: ReadonlyMap<string, StopReason> = new Map([
  ['stop', 'end_turn'],
  ['eos', 'end_turn'],
  ['length', 'max_tokens'],
  ['tool_calls', 'tool_use'],
  ['function_call', 'tool_use'],
  ['content_filter', 'refusal'],
]);

/**
 * Anthropic's usage: its `input_tokens` are those neither read from nor written to the
 * prompt cache (the house's count holds all three), beside the cache's own two counts.
 */
export function usageWire(usage: TokenUsage): Json {
  const read = usage.cachedTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - read - written),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

interface OpenBlock {
  index: number;
  block: Json;
  /** The engine's index of the tool call this block is (null: a whole call, or not a tool call). */
  toolIndex: number | null;
  text: string;
  /** A thinking block's signature from the provider (null: Sluice signs it). */
  signature: string | null;
}

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Tool input text as the object it is (empty: `{}`; not JSON: carried under `_raw` rather than lost). */
function inputOf(text: string): Json {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return isJson(parsed) ? parsed : { _raw: text };
  } catch {
    return { _raw: text };
  }
}

export class MessageWriter {
  readonly content: Json[] = [];
  #open: OpenBlock | null = null;
  #finish = 'stop';
  #refused = false;
  #matchedStop: string | null = null;
  #events: Json[] = [];

  constructor(
    private readonly signer: ThinkingSigner,
    /** The request's stop sequences: a matched one the engine names is reported only if it was asked for. */
    private readonly stopSequences: readonly string[],
    /** The request's `thinking.display`: `omitted` returns thinking blocks with an empty text, signed. */
    private readonly thinkingDisplay: 'summarized' | 'omitted' = 'summarized',
  ) {}

  /** The stream events produced since the last drain. */
  drain(): Json[] {
    const events = this.#events;
    this.#events = [];
    return events;
  }

  /** One event of the chat call's stream (its last, the usage billed, ends the message). */
  readStream(event: ChatStreamEvent): void {
    if (event.type === 'chunk') this.#noteStopReason(event.carried.choices[0]);
    for (const answer of readStreamEvent(event)) this.read(answer);
  }

  /** A whole answer. */
  readWhole(result: ChatResult): void {
    this.#noteStopReason(result.carried?.choices[0]);
    for (const answer of readResult(result)) this.read(answer);
  }

  read(event: AnswerEvent): void {
    switch (event.type) {
      case 'reasoning':
        return this.#append('thinking', event.text);
      case 'reasoning_signature':
        return this.#signed(event.signature);
      case 'redacted_reasoning':
        this.#start({ type: 'redacted_thinking', data: event.data }, null);
        return this.#close();
      case 'text':
        return this.#append('text', event.text);
      case 'refusal':
        this.#refused = true;
        return this.#append('text', event.text);
      case 'tool_call':
        return this.#toolCall(event);
      case 'finish':
        this.#finish = event.reason;
        return;
      case 'usage':
        return this.#end(event.usage);
      default:
    }
  }

  get stopReason(): StopReason {
    if (this.#refused) return 'refusal';
    const reason = STOP_REASONS.get(this.#finish) ?? 'end_turn';
    if (reason !== 'end_turn') return reason;
    if (this.#matchedStop !== null) return 'stop_sequence';
    // Engines often say `stop` beside the tool calls they made: the turn still ends for the tools.
    return this.content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  }

  get stopSequence(): string | null {
    return this.stopReason === 'stop_sequence' ? this.#matchedStop : null;
  }

  #noteStopReason(choice: Json | undefined): void {
    const matched = choice?.stop_reason;
    if (typeof matched === 'string' && this.stopSequences.includes(matched)) this.#matchedStop = matched;
  }

  #append(type: 'thinking' | 'text', text: string): void {
    const open = this.#open?.block.type === type ? this.#open : this.#start(type === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' }, null);
    if (type === 'thinking' && this.thinkingDisplay === 'omitted') return;
    open.text += text;
    this.#events.push({ type: 'content_block_delta', index: open.index, delta: type === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text } });
  }

  /** The provider's signature ends the thinking block it signs (one with no text, when the provider omitted it). */
  #signed(signature: string): void {
    const open = this.#open?.block.type === 'thinking' ? this.#open : this.#start({ type: 'thinking', thinking: '', signature: '' }, null);
    open.signature = signature;
    this.#close();
  }

  #toolCall(event: Extract<AnswerEvent, { type: 'tool_call' }>): void {
    const open = this.#open;
    const continues = event.index !== null && open?.block.type === 'tool_use' && open.toolIndex === event.index && (event.id === undefined || event.id === open.block.id);
    const block = continues ? open! : this.#start({ type: 'tool_use', id: event.id ?? newToolUseId(), name: event.name ?? '', input: {} }, event.index);
    if (event.arguments !== '') {
      block.text += event.arguments;
      this.#events.push({ type: 'content_block_delta', index: block.index, delta: { type: 'input_json_delta', partial_json: event.arguments } });
    }
    if (event.index === null) this.#close();
  }

  #start(block: Json, toolIndex: number | null): OpenBlock {
    this.#close();
    const open: OpenBlock = { index: this.content.length, block, toolIndex, text: '', signature: null };
    this.content.push(block);
    this.#events.push({ type: 'content_block_start', index: open.index, content_block: { ...block } });
    this.#open = open;
    return open;
  }

  #close(): void {
    const open = this.#open;
    if (!open) return;
    this.#open = null;
    const { block } = open;
    if (block.type === 'text') block.text = open.text;
    else if (block.type === 'tool_use') block.input = inputOf(open.text);
    else if (block.type === 'thinking') {
      block.thinking = open.text;
      block.signature = open.signature ?? this.signer.sign(open.text);
      this.#events.push({ type: 'content_block_delta', index: open.index, delta: { type: 'signature_delta', signature: block.signature } });
    }
    this.#events.push({ type: 'content_block_stop', index: open.index });
  }

  #end(usage: TokenUsage): void {
    this.#close();
    this.#events.push(
      { type: 'message_delta', delta: { stop_reason: this.stopReason, stop_sequence: this.stopSequence }, usage: usageWire(usage) },
      { type: 'message_stop' },
    );
  }
}

/** The message object: its head (id, the model asked for) and what the writer built. */
export function messageWire(id: string, model: string, writer: MessageWriter, usage: TokenUsage): Json {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: writer.content,
    stop_reason: writer.stopReason,
    stop_sequence: writer.stopSequence,
    usage: usageWire(usage),
  };
}

/** `message_start`: the message with no content yet, and the input usage counted before the engine ran. */
export const messageStart = (id: string, model: string, inputTokens: number): Json => ({
  type: 'message_start',
  message: {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  },
});
