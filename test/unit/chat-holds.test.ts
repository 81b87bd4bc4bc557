/**
 * What a chat call is held for before the engine's usage arrives: the input estimate
 * counts tool definitions, schemas, tool calls and non-text parts (an image part a fixed
 * estimate), and `n` multiplies the output cap; a cap the meter lowered is shared by the
 * choices.
 */
import { describe, expect, it } from 'vitest';
import type { ModelSpec } from '../../src/domain/models/model-spec.types.js';
import type { ChatMessage } from '../../src/domain/models/inference-backend.port.js';
import { IMAGE_PART_TOKENS, chatInputOf, meteredCallOf, outputCapOf } from '../../src/domain/completions/metered-call.js';
import { withOutputCap, type PreparedCall } from '../../src/domain/completions/chat-runner.js';

// Only the fields the hold reads.
const model = { id: 'm', maxOutputTokens: 1_000 } as ModelSpec;
const FRAMING = 8;
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('the input estimate', () => {
  it('counts a plain conversation by its texts', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hello' }];
    const { texts, images } = chatInputOf(messages, {});
    expect({ texts, images }).toEqual({ texts: ['Hello'], images: 0 });
    expect(meteredCallOf(model, 'r', 'q', texts, 10, images * IMAGE_PART_TOKENS).inputTokens).toBe(5 + FRAMING);
  });

  it('counts tools, tool_choice, response_format, tool calls and non-text parts as their JSON, and each image as a fixed estimate', () => {
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];
    const format = { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' } } };
    const toolCalls = [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }];
    const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: 'What is this?',
        wireContent: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://x/a.png' } }, { type: 'image_url', image_url: { url: 'https://x/b.png' } }, audio],
      },
      { role: 'assistant', content: '', wireContent: null, tool_calls: toolCalls },
    ];
    const { texts, images } = chatInputOf(messages, { tools, tool_choice: 'auto', response_format: format, temperature: 0.2 });
    expect(images).toBe(2);
    expect(texts).toEqual(['What is this?', JSON.stringify(audio), '', JSON.stringify(toolCalls), JSON.stringify(tools), '"auto"', JSON.stringify(format)]);
    const expected = 2 * IMAGE_PART_TOKENS + texts.reduce((n, t) => n + bytes(t) + FRAMING, 0);
    expect(meteredCallOf(model, 'r', 'q', texts, 10, images * IMAGE_PART_TOKENS).inputTokens).toBe(expected);
  });
});

describe('the output cap', () => {
  it('is the request’s cap, or the model’s default, times n', () => {
    expect(outputCapOf(model, { max_tokens: 50 })).toEqual({ maxOutputTokens: 50, outputCapExplicit: true });
    expect(outputCapOf(model, { max_completion_tokens: 40, max_tokens: 50, n: 3 })).toEqual({ maxOutputTokens: 120, outputCapExplicit: true });
    expect(outputCapOf(model, { n: 2 })).toEqual({ maxOutputTokens: 2_000, outputCapExplicit: false });
  });

  it('a cap the meter lowered is shared by the choices', () => {
    const call = { kind: 'chat', conversation: { sampling: { n: 4 } } } as unknown as PreparedCall;
    expect((withOutputCap(call, 100) as { conversation: { sampling: Record<string, unknown> } }).conversation.sampling).toEqual({ n: 4, max_tokens: 25 });
    const single = { kind: 'chat', conversation: { sampling: {} } } as unknown as PreparedCall;
    expect((withOutputCap(single, 100) as { conversation: { sampling: Record<string, unknown> } }).conversation.sampling).toEqual({ max_tokens: 100 });
  });
});
