/**
 * Bad input on POST /v1/messages and /v1/messages/count_tokens: every field of the wrong
 * type, unknown block types, a tool_result with no tool_use before it, an input over the
 * model's context window, an unreadable body. Each is a 400 in Anthropic's envelope whose
 * message names the field, and no engine is called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { inferenceYaml } from '../inference/setup.js';

const MODEL = 'gpt-oss-120b';

let upstream: FakeUpstream;
let server: TestServer;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl, { [MODEL]: { context_length: 1_000 } }) });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

const VALID = { model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] };
const user = (content: unknown) => ({ ...VALID, messages: [{ role: 'user', content }] });

/** A body, and the message its 400 must carry (the field named first). */
const CASES: Array<[string, unknown, string]> = [
  ['not an object', [1, 2], 'The request body must be a JSON object, got an array'],
  ['model missing', { max_tokens: 16, messages: VALID.messages }, 'model is required'],
  ['model a number', { ...VALID, model: 7 }, 'model must be a non-empty string'],
  ['max_tokens missing', { model: MODEL, messages: VALID.messages }, 'max_tokens is required'],
  ['max_tokens a string', { ...VALID, max_tokens: '16' }, 'max_tokens must be an integer of at least 1'],
  ['max_tokens zero', { ...VALID, max_tokens: 0 }, 'max_tokens must be an integer of at least 1'],
  ['messages missing', { model: MODEL, max_tokens: 16 }, 'messages is required'],
  ['messages empty', { ...VALID, messages: [] }, 'messages must be a non-empty array of messages'],
  ['a message a string', { ...VALID, messages: ['Hi'] }, 'messages[0] must be an object with role and content, got a string'],
  ['role developer', { ...VALID, messages: [{ role: 'developer', content: 'Hi' }] }, 'messages[0].role must be "user", "assistant" or "system"'],
  ['content a number', user(5), 'messages[0].content must be a string or an array of content blocks'],
  ['block unknown type', user([{ type: 'video', url: 'x' }]), 'messages[0].content[0].type must be one of text, image, document, tool_use, tool_result, thinking, redacted_thinking (other block types are not supported here)'],
  ['block without a type', user([{ text: 'Hi' }]), 'messages[0].content[0].type must be one of text, image, document, tool_use, tool_result, thinking, redacted_thinking (other block types are not supported here)'],
  ['text block text a number', user([{ type: 'text', text: 1 }]), 'messages[0].content[0].text must be a string'],
  ['image source unknown', user([{ type: 'image', source: { type: 'file', file_id: 'f' } }]), 'messages[0].content[0].source.type must be one of base64, url'],
  ['image media type', user([{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA==' } }]), 'messages[0].content[0].source.media_type must be one of image/jpeg, image/png, image/gif, image/webp'],
  ['document data missing', user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf' } }]), 'messages[0].content[0].source.data must be a string (base64)'],
  ['tool_use input a string', { ...VALID, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: '{}' }] }] }, 'messages[0].content[0].input must be an object'],
  ['tool_result id missing', user([{ type: 'tool_result', content: 'x' }]), 'messages[0].content[0].tool_use_id must be a string'],
  ['tool_result nested tool_use', user([{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }]), 'messages[0].content[0].content[0].type must be one of text, image, document, tool_reference inside a tool result'],
  ['thinking signature missing', { ...VALID, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] }] }, 'messages[0].content[0].signature must be a string'],
  ['system a number', { ...VALID, system: 3 }, 'system must be a string or an array of text blocks, got a number'],
  ['system block not text', { ...VALID, system: [{ type: 'image', text: 'x' }] }, 'system[0].type must be "text"'],
  ['stop_sequences a string', { ...VALID, stop_sequences: 'END' }, 'stop_sequences must be an array of strings, got a string'],
  ['stop_sequences of numbers', { ...VALID, stop_sequences: [1] }, 'stop_sequences[0] must be a string'],
  ['stream a string', { ...VALID, stream: 'yes' }, 'stream must be a boolean, got a string'],
  ['temperature above 1', { ...VALID, temperature: 1.5 }, 'temperature must be a number between 0 and 1'],
  ['top_p a string', { ...VALID, top_p: 'high' }, 'top_p must be a number between 0 and 1'],
  ['top_k negative', { ...VALID, top_k: -1 }, 'top_k must be an integer of at least 0'],
  ['metadata a string', { ...VALID, metadata: 'u1' }, 'metadata must be an object, got a string'],
  ['metadata.user_id a number', { ...VALID, metadata: { user_id: 1 } }, 'metadata.user_id must be a string, got a number'],
  ['tools an object', { ...VALID, tools: {} }, 'tools must be an array of tools, got an object'],
  ['tool without input_schema', { ...VALID, tools: [{ name: 'f' }] }, 'tools[0].input_schema must be a JSON schema object'],
  ['tool name with spaces', { ...VALID, tools: [{ name: 'get weather', input_schema: {} }] }, 'tools[0].name must be 1 to 128 letters, digits, underscores or dashes'],
  ['tool_choice a string', { ...VALID, tool_choice: 'auto' }, 'tool_choice must be an object, got a string'],
  ['tool_choice unknown type', { ...VALID, tool_choice: { type: 'required' } }, 'tool_choice.type must be one of auto, any, tool, none'],
  ['tool_choice tool without a name', { ...VALID, tool_choice: { type: 'tool' } }, 'tool_choice.name must name the tool'],
  ['tool_reference without tool_name', user([{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'tool_reference' }] }]), 'messages[0].content[0].content[0].tool_name must be a string'],
  ['tool_reference outside a tool result', user([{ type: 'tool_reference', tool_name: 'f' }]), 'messages[0].content[0].type must be one of text, image, document, tool_use, tool_result, thinking, redacted_thinking (other block types are not supported here)'],
  ['tool defer_loading a string', { ...VALID, tools: [{ name: 'f', input_schema: {}, defer_loading: 'yes' }] }, 'tools[0].defer_loading must be a boolean, got a string'],
  ['thinking a boolean', { ...VALID, thinking: true }, 'thinking must be an object, got a boolean'],
  ['thinking.display unknown', { ...VALID, thinking: { type: 'adaptive', display: 'hidden' } }, 'thinking.display must be summarized or omitted'],
  ['thinking budget too small', { ...VALID, thinking: { type: 'enabled', budget_tokens: 10 } }, 'thinking.budget_tokens must be an integer of at least 1024'],
  ['service_tier unknown', { ...VALID, service_tier: 'priority' }, 'service_tier must be auto or standard_only'],
];

describe('POST /v1/messages refuses bad input in Anthropic envelope, naming the field', () => {
  it.each(CASES)('%s', async (_name, body, message) => {
    const res = await call(server.baseUrl, 'POST', '/v1/messages', { key, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: res.headers.get('request-id') });
  });

  it('a tool_result with no tool_use before it', async () => {
    const body = {
      ...VALID,
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'x' }] },
      ],
    };
    const res = await call(server.baseUrl, 'POST', '/v1/messages', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      type: 'invalid_request_error',
      message: 'messages[2].content[0].tool_use_id: unexpected tool_use_id found in tool_result blocks: toolu_2. Each tool_result block must have a corresponding tool_use block in the previous message.',
    });
  });

  it('a tool_reference naming no tool of the request', async () => {
    const body = {
      ...VALID,
      tools: [{ name: 'ToolSearch', input_schema: {} }, { name: 'WebFetch', input_schema: {}, defer_loading: true }],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ToolSearch', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: 'WebSearch' }] }] },
      ],
    };
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const res = await call(server.baseUrl, 'POST', path, { key, body });
      expect([path, res.status, res.body.error]).toEqual([
        path,
        400,
        { type: 'invalid_request_error', message: 'messages[2].content[0].content[0].tool_name: the tool_reference names WebSearch, which is not in tools' },
      ]);
    }
    expect(upstream.count('/chat/completions')).toBe(0);
  });

  it('a tool_use block in a user message, an image in an assistant message', async () => {
    const inUser = await call(server.baseUrl, 'POST', '/v1/messages', { key, body: user([{ type: 'tool_use', id: 't', name: 'f', input: {} }]) });
    expect(inUser.body.error.message).toBe('messages[0].content[0].type: tool_use blocks may only be sent in assistant messages');
    const image = { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } };
    const inAssistant = await call(server.baseUrl, 'POST', '/v1/messages', { key, body: { ...VALID, messages: [{ role: 'assistant', content: [image] }] } });
    expect(inAssistant.body.error.message).toBe('messages[0].content[0].type: image blocks may only be sent in user messages');
  });

  it('an input over the context window, before any engine call', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/messages', { key, body: user('lorem ipsum '.repeat(800)) });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ type: 'invalid_request_error', message: 'prompt is too long: 2400 tokens > 1000 maximum' });
  });

  it('a body that is not JSON', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/messages', { key, rawBody: '{"model":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'Invalid JSON body at line 1, column 10: Expected a value, found the end of the input' } });
  });

  it('count_tokens refuses the same faults in the same envelope', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/messages/count_tokens', { key, body: { model: MODEL, messages: [{ role: 'user', content: [{ type: 'video' }] }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^messages\[0\]\.content\[0\]\.type must be one of text, image/);
    expect(upstream.count('/chat/completions')).toBe(0);
  });
});
