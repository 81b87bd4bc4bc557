/** Responses input items → the chat messages an engine receives. */
import { describe, expect, it } from 'vitest';
import { messagesOfItems } from '../../src/domain/responses/input-items.js';
import type { ResponseInputItem } from '../../src/domain/responses/responses.types.js';

const call = (id: string, name = 'f'): ResponseInputItem => ({ type: 'function_call', call_id: id, name, arguments: '{}' });
const toolCall = (id: string, name = 'f') => ({ id, type: 'function', function: { name, arguments: '{}' } });

describe('messagesOfItems', () => {
  it('consecutive function calls are one assistant turn, joined to the assistant text just before them', () => {
    const messages = messagesOfItems(
      [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        { role: 'assistant', content: 'Checking both.' },
        call('c1'),
        call('c2'),
        { type: 'function_call_output', call_id: 'c1', output: '21' },
        { type: 'function_call_output', call_id: 'c2', output: '25' },
        call('c3'),
      ],
      'input',
    );
    expect(messages).toEqual([
      { role: 'user', content: 'Weather in Oslo and Rome?' },
      { role: 'assistant', content: 'Checking both.', tool_calls: [toolCall('c1'), toolCall('c2')] },
      { role: 'tool', tool_call_id: 'c1', content: '21' },
      { role: 'tool', tool_call_id: 'c2', content: '25' },
      { role: 'assistant', content: '', wireContent: null, tool_calls: [toolCall('c3')] },
    ]);
  });

  it('reasoning before a user\'s message has no turn to go with and is dropped; developer is system; parts become chat parts', () => {
    const messages = messagesOfItems(
      [
        { role: 'developer', content: 'Be brief.' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'hmm' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Listen and look' },
            { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } },
            { type: 'input_image', file_id: 'file-1' },
          ],
        },
      ],
      'input',
    );
    expect(messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: 'Listen and look',
        wireContent: [
          { type: 'text', text: 'Listen and look' },
          { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } },
          { type: 'file', file: { file_id: 'file-1' } },
        ],
      },
    ]);
  });

  it('reasoning goes onto the assistant turn after it (or, just before a tool\'s output, the one before it); namespaced calls are qualified', () => {
    const opened: string[] = [];
    const open = (sealed: string, param: string) => {
      opened.push(param);
      return `opened ${sealed}`;
    };
    const messages = messagesOfItems(
      [
        { role: 'user', content: 'Go' },
        { type: 'reasoning', summary: [], encrypted_content: 'S1' },
        { type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        call('c2'),
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'plain' }] },
        { type: 'function_call_output', call_id: 'c2', output: 'ok' },
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'to say' }] },
        { role: 'assistant', content: 'Done.' },
      ],
      'input',
      open,
    );
    expect(opened).toEqual(['input[1].encrypted_content']);
    expect(messages).toEqual([
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: '', wireContent: null, reasoning: 'opened S1', tool_calls: [toolCall('c1', 'multi_agent_v1__spawn_agent')] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      { role: 'assistant', content: '', wireContent: null, reasoning: 'plain', tool_calls: [toolCall('c2')] },
      { role: 'tool', tool_call_id: 'c2', content: 'ok' },
      { role: 'assistant', content: 'Done.', reasoning: 'to say' },
    ]);
  });

  it('a message of empty text parts is refused by name', () => {
    expect(() => messagesOfItems([{ role: 'user', content: [{ type: 'input_text', text: '' }] }], 'input')).toThrow('input[0].content must not be empty');
  });
});
