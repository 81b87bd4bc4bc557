/**
 * The Messages writer's block discipline and stop reasons, on the answer reader's events:
 * a block's type never changes, indexes are dense, a tool call whose engine repeats its id
 * on every delta stays one block, an in-process runtime's whole calls are one block each,
 * a thinking block ends with its signature (its text left out with `display: "omitted"`);
 * deferred tools offered once a tool_reference names them; and Anthropic's error type of each status.
 */
import { describe, expect, it } from 'vitest';
import { MessageWriter, usageWire } from '../../src/wire/messages/writer.js';
import { ThinkingSigner } from '../../src/wire/messages/thinking-signature.js';
import { anthropicErrorType } from '../../src/wire/messages/errors.js';
import { messagesCallOf, referencedTools, toolsOf } from '../../src/wire/messages/mapper.js';

const signer = new ThinkingSigner(() => ['a-secret-of-sixteen-or-more']);
const usage = { type: 'usage' as const, usage: { inputTokens: 3, outputTokens: 4 } };

const shape = (events: Record<string, any>[]) =>
  events.map((e) => [e.type, e.index, e.delta?.type ?? e.content_block?.type ?? null].filter((x) => x !== undefined && x !== null).join(':'));

describe('MessageWriter', () => {
  it('starts a new block whenever the kind of content changes, with dense indexes', () => {
    const writer = new MessageWriter(signer, []);
    for (const event of [
      { type: 'text' as const, text: 'a', logprobs: null },
      { type: 'tool_call' as const, index: 0, id: 'c1', name: 'f', arguments: '{"x"' },
      { type: 'tool_call' as const, index: 0, id: 'c1', arguments: ':1}' },
      { type: 'tool_call' as const, index: 1, id: 'c2', name: 'g', arguments: '' },
      { type: 'text' as const, text: 'b', logprobs: null },
      { type: 'finish' as const, reason: 'stop' },
      usage,
    ]) writer.read(event);
    expect(shape(writer.drain())).toEqual([
      'content_block_start:0:text', 'content_block_delta:0:text_delta', 'content_block_stop:0',
      'content_block_start:1:tool_use', 'content_block_delta:1:input_json_delta', 'content_block_delta:1:input_json_delta', 'content_block_stop:1',
      'content_block_start:2:tool_use', 'content_block_stop:2',
      'content_block_start:3:text', 'content_block_delta:3:text_delta', 'content_block_stop:3',
      'message_delta', 'message_stop',
    ]);
    expect(writer.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'tool_use', id: 'c1', name: 'f', input: { x: 1 } },
      { type: 'tool_use', id: 'c2', name: 'g', input: {} },
      { type: 'text', text: 'b' },
    ]);
    // The engine said `stop` beside its tool calls: the turn ends for the tools.
    expect(writer.stopReason).toBe('tool_use');
  });

  it("makes an in-process runtime's whole calls one block each, and signs a thinking block", () => {
    const writer = new MessageWriter(signer, []);
    writer.read({ type: 'reasoning', text: 'hm' });
    writer.read({ type: 'tool_call', index: null, id: 'call_1', name: 'f', arguments: '{}' });
    writer.read({ type: 'tool_call', index: null, id: 'call_2', name: 'f', arguments: '{}' });
    writer.read({ type: 'finish', reason: 'tool_calls' });
    writer.read(usage);
    const events = writer.drain();
    expect(shape(events).slice(0, 4)).toEqual(['content_block_start:0:thinking', 'content_block_delta:0:thinking_delta', 'content_block_delta:0:signature_delta', 'content_block_stop:0']);
    expect(writer.content[0]).toEqual({ type: 'thinking', thinking: 'hm', signature: signer.sign('hm') });
    expect(writer.content.map((b) => b.id ?? null)).toEqual([null, 'call_1', 'call_2']);
    expect(signer.verifies('hm', signer.sign('hm'))).toBe(true);
    expect(signer.verifies('hm!', signer.sign('hm'))).toBe(false);
    // Rotation: a block signed under the previous secret still verifies.
    const rotated = new ThinkingSigner(() => ['a-newer-secret-of-sixteen', 'a-secret-of-sixteen-or-more']);
    expect(rotated.verifies('hm', signer.sign('hm'))).toBe(true);
    expect(rotated.sign('hm')).not.toBe(signer.sign('hm'));
  });

  it('with display "omitted", starts and signs a thinking block with an empty text and sends no thinking_delta', () => {
    const writer = new MessageWriter(signer, [], 'omitted');
    writer.read({ type: 'reasoning', text: 'secret ' });
    writer.read({ type: 'reasoning', text: 'plan' });
    writer.read({ type: 'text', text: 'Done.', logprobs: null });
    writer.read(usage);
    const events = writer.drain();
    expect(shape(events)).toEqual([
      'content_block_start:0:thinking', 'content_block_delta:0:signature_delta', 'content_block_stop:0',
      'content_block_start:1:text', 'content_block_delta:1:text_delta', 'content_block_stop:1',
      'message_delta', 'message_stop',
    ]);
    expect(events[0]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
    expect(events[1]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: signer.sign('') } });
    expect(writer.content).toEqual([{ type: 'thinking', thinking: '', signature: signer.sign('') }, { type: 'text', text: 'Done.' }]);
    expect(JSON.stringify(events)).not.toContain('secret');
    // The block as it comes back verifies.
    expect(signer.verifies('', writer.content[0]!.signature as string)).toBe(true);
  });

  it('reports refusal, max_tokens, and a tool input that is not JSON without losing it', () => {
    const refused = new MessageWriter(signer, []);
    refused.read({ type: 'refusal', text: 'No.' });
    expect(refused.stopReason).toBe('refusal');
    refused.read(usage);
    expect(refused.content).toEqual([{ type: 'text', text: 'No.' }]);

    const cut = new MessageWriter(signer, ['END']);
    cut.read({ type: 'tool_call', index: 0, id: 'c', name: 'f', arguments: '{"x": ' });
    cut.read({ type: 'finish', reason: 'length' });
    cut.read(usage);
    expect(cut.stopReason).toBe('max_tokens');
    expect(cut.stopSequence).toBeNull();
    expect(cut.content[0]!.input).toEqual({ _raw: '{"x": ' });
  });
});

describe("Anthropic's error types", () => {
  it('follow the status', () => {
    expect([400, 401, 402, 403, 404, 413, 429, 500, 504, 529, 409, 503].map(anthropicErrorType)).toEqual([
      'invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'request_too_large',
      'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error', 'invalid_request_error', 'api_error',
    ]);
  });
});

describe('server tools', () => {
  const tools = [
    { name: 'f', input_schema: { type: 'object' } },
    { type: 'web_search_20250305', name: 'web_search' },
    { type: 'custom', name: 'g', input_schema: {} },
  ];

  it('are dropped and named, or refused naming the tool, as the setting says', () => {
    expect(toolsOf(tools, 'drop', new Set())).toEqual({
      tools: [
        { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'g', parameters: {} } },
      ],
      dropped: ['web_search'],
    });
    expect(() => toolsOf(tools, 'refuse', new Set())).toThrow('tools[1]: the server tool web_search (web_search_20250305) is not available here; only custom tools with input_schema are');
  });
});

describe('deferred tools (tool search)', () => {
  const tools = [
    { name: 'ToolSearch', input_schema: { type: 'object' } },
    { name: 'WebFetch', input_schema: { type: 'object' }, defer_loading: true },
    { name: 'DeferredToolPlaceholder', input_schema: { type: 'object' }, defer_loading: true },
  ];
  const search = { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't1', name: 'ToolSearch', input: { query: 'select:WebFetch' } }] };
  const found = {
    role: 'user' as const,
    content: [
      { type: 'tool_result' as const, tool_use_id: 't1', content: [{ type: 'tool_reference' as const, tool_name: 'WebFetch' }] },
      { type: 'text' as const, text: 'Tool loaded.' },
    ],
  };
  const names = (call: ReturnType<typeof messagesCallOf>) => call.tools.map((t: any) => t.function.name);
  const callOf = (messages: any[], metadata?: { user_id: string }) =>
    messagesCallOf({ model: 'm', max_tokens: 10, messages, tools, metadata }, { serverTools: 'drop', signer }, 10, 'session-1');

  it('are offered to the engine only once a tool_reference names them; the placeholder never is', () => {
    expect(names(callOf([{ role: 'user', content: 'Fetch a page' }]))).toEqual(['ToolSearch']);
    const after = callOf([{ role: 'user', content: 'Fetch a page' }, search, found]);
    expect(names(after)).toEqual(['ToolSearch', 'WebFetch']);
    expect(after.request.sampling.tools).toEqual(after.tools);
    expect(after.request.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'Tool loaded: WebFetch' },
      { role: 'user', content: 'Tool loaded.' },
    ]);
  });

  it('refuse a tool_reference naming no tool of the request', () => {
    const wrong = { ...found, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: [{ type: 'tool_reference' as const, tool_name: 'Nope' }] }] };
    expect(() => referencedTools([search, wrong], tools)).toThrow('messages[1].content[0].content[0].tool_name: the tool_reference names Nope, which is not in tools');
  });
});

describe('metadata.user_id', () => {
  it('is never sent to the engine as `user`; it is the affinity hint beside the session', () => {
    const userId = JSON.stringify({ device_id: 'dev', session_id: 's' });
    const call = messagesCallOf({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], metadata: { user_id: userId } }, { serverTools: 'drop', signer }, 10, 'session-1');
    expect(call.request.sampling).toEqual({ max_tokens: 10 });
    expect(call.request.affinity).toEqual({ user: userId, session: 'session-1' });
  });
});

describe("Anthropic's usage", () => {
  it('reports cache reads and writes beside the input tokens that were neither', () => {
    expect(usageWire({ inputTokens: 100, outputTokens: 5, cachedTokens: 60, cacheWriteTokens: 10 })).toEqual({
      input_tokens: 30,
      output_tokens: 5,
      cache_creation_input_tokens: 10,
      cache_read_input_tokens: 60,
    });
    expect(usageWire({ inputTokens: 7, outputTokens: 1 })).toEqual({ input_tokens: 7, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });
});
