/**
 * Bedrock Converse answers → the port's shapes, in OpenAI's choice shape (what every
 * writer reads from an upstream's carried answer): text as `content`, `reasoningContent`
 * as `reasoning_content`, `toolUse` blocks as `tool_calls`, Bedrock's stop reasons as
 * OpenAI's finish reasons, and its usage with the cached tokens. Bedrock's `inputTokens`
 * leaves out the tokens read from or written to the prompt cache; the port's
 * `inputTokens` counts every input token (OpenAI's convention), so they are added back.
 */
import type { ContentBlock, ConverseResponse, ConverseStreamOutput, TokenUsage as BedrockUsage } from '@aws-sdk/client-bedrock-runtime';
import type { ChatOutput, ChatStreamEvent, TokenUsage } from '../../../../domain/models/inference-backend.port.js';

type Json = Record<string, unknown>;

/** Bedrock's stop reasons → OpenAI's finish reasons. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export const finishReasonOf = (stopReason: string | undefined): string => FINISH_REASONS[stopReason ?? ''] ?? 'stop';

export function usageOf(usage: BedrockUsage | undefined): TokenUsage | null {
  if (!usage || typeof usage.inputTokens !== 'number') return null;
  const read = usage.cacheReadInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  const out: TokenUsage = { inputTokens: usage.inputTokens + read + written, outputTokens: usage.outputTokens ?? 0 };
  if (read > 0) out.cachedTokens = read;
  if (written > 0) out.cacheWriteTokens = written;
  return out;
}

/** One whole Converse answer: its message's blocks in OpenAI's message shape. */
export function readConverse(response: ConverseResponse): (Omit<ChatOutput, 'usage'> & { usage: TokenUsage | null }) | null {
  const blocks = response.output?.message?.content;
  if (!blocks) return null;
  let content = '';
  let reasoning = '';
  const toolCalls: Json[] = [];
  for (const block of blocks) {
    if (block.text !== undefined) content += block.text;
    else if (block.reasoningContent?.reasoningText?.text !== undefined) reasoning += block.reasoningContent.reasoningText.text;
    else if (block.toolUse) toolCalls.push(toolCallOf(block, toolCalls.length));
  }
  const finishReason = finishReasonOf(response.stopReason);
  const message: Json = { role: 'assistant', content: content === '' && toolCalls.length > 0 ? null : content };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    content,
    reasoning: reasoning === '' ? null : reasoning,
    finishReason,
    usage: usageOf(response.usage),
    carried: { choices: [{ index: 0, message, finish_reason: finishReason }], fields: {} },
  };
}

function toolCallOf(block: ContentBlock, index: number): Json {
  const use = block.toolUse!;
  return { id: use.toolUseId, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) }, index };
}

/**
 * ConverseStream's events → the port's chunks, in OpenAI's delta shape. Bedrock numbers
 * content blocks (text, reasoning and tool uses alike); OpenAI numbers tool calls alone,
 * so the reader keeps the one from the other.
 */
export class ConverseStreamReader {
  readonly #toolIndex = new Map<number, number>();
  finished = false;
  usage: TokenUsage | null = null;

  /** The port events of one stream event (none for messageStart, contentBlockStop, metadata). */
  read(event: ConverseStreamOutput): ChatStreamEvent[] {
    if (event.contentBlockStart?.start?.toolUse) {
      const { contentBlockIndex = 0, start } = event.contentBlockStart;
      const index = this.#toolIndex.size;
      this.#toolIndex.set(contentBlockIndex, index);
      const call = { index, id: start.toolUse!.toolUseId, type: 'function', function: { name: start.toolUse!.name, arguments: '' } };
      return [chunk({ tool_calls: [call] }, '')];
    }
    if (event.contentBlockDelta?.delta) return this.#delta(event.contentBlockDelta.contentBlockIndex ?? 0, event.contentBlockDelta.delta);
    if (event.messageStop) {
      this.finished = true;
      return [{ type: 'chunk', carried: { choices: [{ index: 0, delta: {}, finish_reason: finishReasonOf(event.messageStop.stopReason) }], fields: {} }, text: '' }];
    }
    if (event.metadata) this.usage = usageOf(event.metadata.usage);
    return [];
  }

  #delta(blockIndex: number, delta: NonNullable<ConverseStreamOutput['contentBlockDelta']>['delta'] & object): ChatStreamEvent[] {
    if (delta.text !== undefined) return delta.text === '' ? [] : [chunk({ content: delta.text }, delta.text)];
    const reasoning = delta.reasoningContent?.text;
    if (reasoning !== undefined) return reasoning === '' ? [] : [chunk({ reasoning_content: reasoning }, reasoning)];
    if (delta.toolUse) {
      const index = this.#toolIndex.get(blockIndex) ?? 0;
      return [chunk({ tool_calls: [{ index, function: { arguments: delta.toolUse.input ?? '' } }] }, delta.toolUse.input ?? '')];
    }
    return [];
  }
}

function chunk(delta: Json, text: string): ChatStreamEvent {
  return { type: 'chunk', carried: { choices: [{ index: 0, delta, finish_reason: null }], fields: {} }, text };
}
