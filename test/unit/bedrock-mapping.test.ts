/** The bedrock protocol's mapping on its own: a conversation to Converse's shape, and ConverseStream's events back to OpenAI's deltas. */
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatParams } from '../../src/domain/models/inference-backend.port.js';
import type { ModelSpec } from '../../src/domain/models/model-spec.types.js';
import { converseRequest } from '../../src/inference/upstream/protocols/bedrock/map-request.js';
import { ConverseStreamReader, readConverse } from '../../src/inference/upstream/protocols/bedrock/map-response.js';

const model = { id: 'm', binding: { dropParams: [] } } as unknown as ModelSpec;
const paramsOf = (messages: ChatMessage[], sampling: Record<string, unknown> = {}) =>
  ({ model, messages, sampling, options: {}, requestId: 'r', signal: new AbortController().signal }) as ChatParams;
const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('converseRequest', () => {
  it('merges consecutive tool results into one user turn, leaves out empty assistant text, and declares the called tools when the request sends none', () => {
    const request = converseRequest(
      paramsOf([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        { role: 'assistant', content: '', tool_calls: [call('a', 'weather', '{"city":"Oslo"}'), call('b', 'weather', '{"city":"Rome"}')] },
        { role: 'tool', content: '21', tool_call_id: 'a' },
        { role: 'tool', content: '25', tool_call_id: 'b' },
        { role: 'user', content: 'And Paris?' },
      ]),
      model,
      'model-x',
    );
    expect(request).toEqual({
      modelId: 'model-x',
      system: [{ text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ text: 'Weather in Oslo and Rome?' }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'a', name: 'weather', input: { city: 'Oslo' } } }, { toolUse: { toolUseId: 'b', name: 'weather', input: { city: 'Rome' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'a', content: [{ text: '21' }] } }, { toolResult: { toolUseId: 'b', content: [{ text: '25' }] } }, { text: 'And Paris?' }] },
      ],
      toolConfig: { tools: [{ toolSpec: { name: 'weather', inputSchema: { json: { type: 'object', properties: {} } } } }] },
    });
  });

  it('refuses tool arguments that are not JSON, naming where they are', () => {
    expect(() => converseRequest(paramsOf([{ role: 'assistant', content: '', tool_calls: [call('a', 'f', '{oops')] }]), model, 'x')).toThrow(
      expect.objectContaining({ kind: 'invalid_request', param: 'messages[0].tool_calls[0].function.arguments' }),
    );
  });

  it('maps tool_choice required and a named tool, and refuses none', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    expect(converseRequest(paramsOf([{ role: 'user', content: 'x' }], { tools, tool_choice: 'required' }), model, 'x').toolConfig?.toolChoice).toEqual({ any: {} });
    expect(converseRequest(paramsOf([{ role: 'user', content: 'x' }], { tools, tool_choice: { type: 'function', function: { name: 'f' } } }), model, 'x').toolConfig?.toolChoice).toEqual({ tool: { name: 'f' } });
    expect(() => converseRequest(paramsOf([{ role: 'user', content: 'x' }], { tools, tool_choice: 'none' }), model, 'x')).toThrow(/^tool_choice is not supported by provider bedrock/);
  });
});

describe('Converse answers', () => {
  it('reads a whole answer: text, reasoning, tool calls, the stop reason and the usage with cache tokens added back', () => {
    const out = readConverse({
      output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'hmm' } } }, { text: 'Sure.' }, { toolUse: { toolUseId: 't', name: 'f', input: { a: 1 } } }] } },
      stopReason: 'tool_use',
      usage: { inputTokens: 5, outputTokens: 7, totalTokens: 42, cacheReadInputTokens: 20, cacheWriteInputTokens: 10 },
      metrics: { latencyMs: 1 },
    });
    expect(out).toEqual({
      content: 'Sure.',
      reasoning: 'hmm',
      finishReason: 'tool_calls',
      usage: { inputTokens: 35, outputTokens: 7, cachedTokens: 20, cacheWriteTokens: 10 },
      carried: {
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Sure.', reasoning_content: 'hmm', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' }, index: 0 }] } }],
        fields: {},
      },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('maps the stop reason %s to %s', (stopReason, finish) => {
    expect(readConverse({ output: { message: { role: 'assistant', content: [{ text: 'x' }] } }, stopReason: stopReason as 'end_turn', usage: undefined, metrics: undefined })?.finishReason).toBe(finish);
  });

  it('numbers streamed tool calls among themselves, not among content blocks', () => {
    const reader = new ConverseStreamReader();
    const deltas = [
      { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Looking.' } } },
      { contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'f' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '{}' } } } },
      { contentBlockStart: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 't2', name: 'g' } } } },
      { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '{"x":1}' } } } },
      { messageStop: { stopReason: 'tool_use' } },
      { metadata: { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 }, metrics: { latencyMs: 1 } } },
    ].flatMap((e) => reader.read(e as never).map((p) => (p.type === 'chunk' ? p.carried.choices[0] : p)));
    expect(deltas).toEqual([
      { index: 0, delta: { content: 'Looking.' }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 1, id: 't2', type: 'function', function: { name: 'g', arguments: '' } }] }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: '{"x":1}' } }] }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'tool_calls' },
    ]);
    expect(reader.finished).toBe(true);
    expect(reader.usage).toEqual({ inputTokens: 3, outputTokens: 4 });
  });
});
