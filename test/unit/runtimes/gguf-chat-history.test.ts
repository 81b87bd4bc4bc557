/**
 * A conversation as node-llama-cpp's chat history for function calling: calls and their
 * results kept together in the model's response, the answer after results continuing it.
 */
import { describe, expect, it } from 'vitest';
import { chatHistoryOf } from '../../../src/inference/backends/gguf/chat-history.js';
import type { ChatMessage } from '../../../src/domain/models/inference-backend.port.js';

const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('chatHistoryOf', () => {
  it('a plain conversation: one item per message, then an empty model response to generate', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'again' },
    ];
    expect(chatHistoryOf(messages)).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'user', text: 'hi' },
      { type: 'model', response: ['hello'] },
      { type: 'user', text: 'again' },
      { type: 'model', response: [] },
    ]);
  });

  it('results join their calls by id (JSON parsed where it parses); a history ending in results ends inside that response', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather and time?' },
      { role: 'assistant', content: 'Looking.', tool_calls: [call('a', 'weather', '{"city":"Oslo"}'), call('b', 'time', 'not json')] },
      { role: 'tool', tool_call_id: 'b', content: '12:00' },
      { role: 'tool', tool_call_id: 'a', content: '{"degrees":21}' },
    ];
    expect(chatHistoryOf(messages)).toEqual([
      { type: 'user', text: 'weather and time?' },
      {
        type: 'model',
        response: [
          'Looking.',
          { type: 'functionCall', name: 'weather', params: { city: 'Oslo' }, result: { degrees: 21 } },
          { type: 'functionCall', name: 'time', params: 'not json', result: '12:00' },
        ],
      },
    ]);
  });

  it('the answer after the results continues the same response; a call left unanswered has a null result', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', tool_calls: [call('a', 'time', '{}'), call('b', 'time', '{}')] },
      { role: 'tool', tool_call_id: 'a', content: '"12:00"' },
      { role: 'assistant', content: 'It is noon.' },
      { role: 'user', content: 'thanks' },
    ];
    expect(chatHistoryOf(messages)).toEqual([
      { type: 'user', text: 'q' },
      {
        type: 'model',
        response: [
          { type: 'functionCall', name: 'time', params: {}, result: '12:00' },
          { type: 'functionCall', name: 'time', params: {}, result: null },
          'It is noon.',
        ],
      },
      { type: 'user', text: 'thanks' },
      { type: 'model', response: [] },
    ]);
  });

  it('a result whose call is not in the conversation is shown as the user’s text; a closing assistant message is a turn of its own', () => {
    const messages: ChatMessage[] = [
      { role: 'tool', tool_call_id: 'gone', content: '{"x":1}' },
      { role: 'assistant', content: 'ok' },
    ];
    expect(chatHistoryOf(messages)).toEqual([
      { type: 'user', text: '{"x":1}' },
      { type: 'model', response: ['ok'] },
      { type: 'model', response: [] },
    ]);
  });
});
