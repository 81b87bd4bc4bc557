/**
 * The request schemas against the domain parsers they front. Each bad body is sent to a
 * route that has only the schema and, as its handler, the domain parser: the schema must
 * refuse it before the handler runs, with exactly the envelope the parser gives for the
 * same body on its own (the batch path, which never meets the schema). Bodies the parser
 * accepts must pass the schema; the faults left to the parser reach it.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AJV_OPTIONS } from '../../src/http/app.js';
import { appErrorToHttp } from '../../src/http/errors.js';
import { registerErrorHandling } from '../../src/http/plugins/error-handler.js';
import { ChatCompletionBody } from '../../src/http/schemas/chat-completions.js';
import { EmbeddingsBody } from '../../src/http/schemas/embeddings.js';
import { ResponsesBody } from '../../src/http/schemas/responses.js';
import { parseChatRequest } from '../../src/domain/completions/chat-request.js';
import { parseEmbeddingsRequest } from '../../src/domain/completions/embeddings.service.js';
import { parseResponsesRequest } from '../../src/domain/completions/responses-request.js';
import { AppError } from '../../src/domain/shared/errors.js';

interface Front {
  schema: TSchema;
  parse: (body: unknown) => unknown;
  /** Faults the schema names exactly as the parser does. */
  refused: unknown[];
  /** Bodies the parser accepts. */
  accepted: unknown[];
  /** Faults the schema leaves to the parser (they need more than a schema can say). */
  leftToParser: unknown[];
}

const hello = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const withContent = (content: unknown) => ({ model: 'm', messages: [{ role: 'user', content }] });
const eleven = 'abcdefghijk'.split('');

const fronts: Record<string, Front> = {
  'chat completions': {
    schema: ChatCompletionBody,
    parse: parseChatRequest,
    refused: [
      [], 'text', 5, null,
      { messages: hello.messages }, { model: null, messages: hello.messages }, { model: '', messages: hello.messages }, { model: 7, messages: hello.messages },
      { model: 'm' }, { model: 'm', messages: null }, { model: 'm', messages: {} }, { model: 'm', messages: [] },
      { model: 'm', messages: ['hi'] }, { model: 'm', messages: [null] }, { model: 'm', messages: [[]] },
      { model: 'm', messages: [{ content: 'x' }] }, { model: 'm', messages: [{ role: null, content: 'x' }] },
      { model: 'm', messages: [{ role: 'robot', content: 'x' }] }, { model: 'm', messages: [{ role: 5, content: 'x' }] },
      { model: 'm', messages: [{ role: 'user', content: 'x' }, { role: 'user' }] }, withContent(null), withContent(''), withContent(5),
      withContent([]), withContent([5]), withContent([null]), withContent([{ type: 'text', text: 'a' }, { type: 'image_url', image_url: {} }]),
      withContent([{ text: 'a' }]), withContent([{ type: 'text' }]), withContent([{ type: 'text', text: 5 }]),
      { model: 'm', messages: [{ role: 'user', content: 'x', name: 5 }] }, { model: 'm', messages: [{ role: 'tool', content: 'x', tool_call_id: [] }] },
      { ...hello, n: 0 }, { ...hello, n: 2 }, { ...hello, n: 1.5 }, { ...hello, n: '1' }, { ...hello, tools: [{ type: 'function' }] },
      { ...hello, stream: 'yes' }, { ...hello, stream: 1 }, { ...hello, stream_options: 'x' }, { ...hello, stream_options: { include_usage: 'y' } },
      { ...hello, metadata: 'x' }, { ...hello, metadata: [] }, { ...hello, temperature: 3 }, { ...hello, temperature: -0.5 }, { ...hello, temperature: '1' },
      { ...hello, top_p: 1.5 }, { ...hello, presence_penalty: 3 }, { ...hello, frequency_penalty: -3 },
      { ...hello, max_tokens: 0 }, { ...hello, max_tokens: 1.5 }, { ...hello, max_tokens: '5' }, { ...hello, max_tokens: 2 ** 60 },
      { ...hello, max_completion_tokens: 0 }, { ...hello, seed: 1.5 }, { ...hello, seed: -(2 ** 60) }, { ...hello, reasoning_effort: 5 },
      { ...hello, response_format: 'json' }, { ...hello, stop: 5 }, { ...hello, stop: ['a', 1] }, { ...hello, stop: ['a', 'b', 'c', 'd', 'e'] },
      { ...hello, categories: [] }, { ...hello, categories: 'a, b' }, { ...hello, categories: ['a', ' '] }, { ...hello, categories: [1] },
      { ...hello, categories: eleven },
    ],
    accepted: [
      hello,
      { ...hello, n: 1, tools: [], stop: [], categories: ['a', 'b'], stream: false, stream_options: { include_usage: true }, seed: -3 },
      { ...hello, n: null, tools: null, stream: null, stream_options: null, metadata: null, temperature: null, top_p: null, max_tokens: null, stop: null, categories: null },
      { ...hello, tools: 'ignored', user: 'u', logit_bias: {}, logprobs: false, metadata: { multi_label: true }, response_format: { type: 'text' } },
      withContent([{ type: 'text', text: 'a' }, { type: 'input_text', text: '' }]),
      { model: 'm', messages: [{ role: 'developer', content: 's', name: null }, { role: 'tool', content: 'r', tool_call_id: 'c' }] },
    ],
    leftToParser: [withContent([{ type: 'text', text: '' }])],
  },
  responses: {
    schema: ResponsesBody,
    parse: parseResponsesRequest,
    refused: [
      [], { input: 'x' }, { model: 5, input: 'x' }, { model: 'm' }, { model: 'm', input: null }, { model: 'm', input: '' },
      { model: 'm', input: [] }, { model: 'm', input: 5 }, { model: 'm', input: [5] }, { model: 'm', input: [{ type: 'function_call_output', output: 'x' }] },
      { model: 'm', input: [{ type: null, role: 'user', content: 'x' }] }, { model: 'm', input: [{ role: 'user', content: 5 }] },
      { model: 'm', input: [{ role: 'user' }] }, { model: 'm', input: 'x', stream: true }, { model: 'm', input: 'x', previous_response_id: 'resp_1' },
      { model: 'm', input: 'x', tools: [{}] }, { model: 'm', input: 'x', text: 'x' }, { model: 'm', input: 'x', text: { format: 'x' } },
      { model: 'm', input: 'x', text: { format: { type: 5 } } }, { model: 'm', input: 'x', text: { format: { type: 'json_object' } } },
      { model: 'm', input: 'x', instructions: ['x'] }, { model: 'm', input: 'x', max_output_tokens: 0 }, { model: 'm', input: 'x', truncation: 'middle' },
      { model: 'm', input: 'x', truncation: 5 }, { model: 'm', input: 'x', reasoning: 'x' }, { model: 'm', input: 'x', reasoning: { effort: 5 } },
      { model: 'm', input: 'x', temperature: 3 }, { model: 'm', input: 'x', top_p: -1 }, { model: 'm', input: 'x', store: 'x' },
      { model: 'm', input: 'x', parallel_tool_calls: 1 }, { model: 'm', input: 'x', user: 5 }, { model: 'm', input: 'x', metadata: [] },
      { model: 'm', input: 'x', categories: eleven },
    ],
    accepted: [
      { model: 'm', input: 'x' },
      { model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x' }] }], instructions: 'be brief' },
      { model: 'm', input: 'x', stream: false, previous_response_id: null, tools: [], text: { format: { type: 'text' } }, truncation: 'disabled' },
      { model: 'm', input: 'x', max_output_tokens: 5, max_tokens: 'read only when max_output_tokens is absent', reasoning: { effort: 'low' } },
    ],
    leftToParser: [{ model: 'm', input: 'x', max_tokens: 0 }],
  },
  embeddings: {
    schema: EmbeddingsBody,
    parse: parseEmbeddingsRequest,
    refused: [
      'x', { input: 'a' }, { model: null, input: 'a' }, { model: 'm' }, { model: 'm', input: null }, { model: 'm', input: '' },
      { model: 'm', input: [] }, { model: 'm', input: 5 }, { model: 'm', input: ['a', ''] }, { model: 'm', input: [1, 2, 3] },
      { model: 'm', input: Array.from({ length: 2049 }, () => 'a') }, { model: 'm', input: 'a', encoding_format: 'int8' },
      { model: 'm', input: 'a', encoding_format: 5 }, { model: 'm', input: 'a', dimensions: 0 }, { model: 'm', input: 'a', dimensions: 1.5 },
    ],
    accepted: [
      { model: 'm', input: 'a' },
      { model: 'm', input: ['a', 'b'], encoding_format: 'base64', dimensions: 384, user: 'u' },
      { model: 'm', input: 'a', encoding_format: null, dimensions: null },
    ],
    leftToParser: [],
  },
};

/** What the parser alone answers for a body: the envelope, or null when it accepts. */
function parserVerdict(front: Front, body: unknown) {
  try {
    front.parse(body);
    return null;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: 400, body: appErrorToHttp(err).body };
  }
}

describe.each(Object.entries(fronts))('the %s body schema', (_name, front) => {
  let app: FastifyInstance;
  let reached = 0;

  beforeAll(async () => {
    app = Fastify({ ajv: { customOptions: AJV_OPTIONS } });
    registerErrorHandling(app);
    app.post('/parse', { schema: { body: front.schema } }, async (request) => {
      reached += 1;
      front.parse(request.body);
      return { accepted: true };
    });
    await app.ready();
  });
  afterAll(async () => app.close());

  const send = async (body: unknown) => {
    const before = reached;
    const res = await app.inject({ method: 'POST', url: '/parse', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    return { status: res.statusCode, body: res.json(), reachedParser: reached > before };
  };

  it.each(front.refused.map((body) => [JSON.stringify(body).slice(0, 120), body]))('refuses %s as the parser would', async (_label, body) => {
    const expected = parserVerdict(front, body);
    expect(expected, 'the parser refuses it too').not.toBeNull();
    const res = await send(body);
    expect(res.reachedParser).toBe(false);
    expect({ status: res.status, body: res.body }).toEqual(expected);
  });

  it.each(front.accepted.map((body) => [JSON.stringify(body).slice(0, 120), body]))('accepts %s', async (_label, body) => {
    expect(parserVerdict(front, body)).toBeNull();
    expect(await send(body)).toEqual({ status: 200, body: { accepted: true }, reachedParser: true });
  });

  it.each(front.leftToParser.map((body) => [JSON.stringify(body), body]))('lets %s through to the parser', async (_label, body) => {
    const expected = parserVerdict(front, body);
    expect(expected).not.toBeNull();
    const res = await send(body);
    expect(res.reachedParser).toBe(true);
    expect({ status: res.status, body: res.body }).toEqual(expected);
  });
});
