/**
 * A toy inbound wire format, to prove a wire is served by being in the list: a body, a
 * mapper to a chat completion, a writer of the chat answer (JSON) and chunks (named
 * events, the last one with the usage), and its own error envelope. Nothing else in the
 * app names it.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { WireErrorFormat } from '../../../src/wire/error-format.js';
import type { WireFormat } from '../../../src/wire/wire-format.js';

const EchoBody = Type.Object({ model: Type.String(), say: Type.String(), stream: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
type EchoBody = Static<typeof EchoBody>;

const EchoAnswer = Type.Object({ kind: Type.Literal('echo.answer'), text: Type.String(), tokens: Type.Object({ in: Type.Integer(), out: Type.Integer() }) });
const EchoEvent = Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) });

type Json = Record<string, any>;

/** The mapper: the toy body as a chat completion body. */
const chatBodyOf = (body: EchoBody, stream: boolean) => ({
  model: body.model,
  messages: [{ role: 'user' as const, content: body.say }],
  ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
});

/** The writer: a chat completion, and each chunk, in the toy's shape. */
const answerOf = (chat: Json) => ({
  kind: 'echo.answer',
  text: chat.choices[0].message.content,
  tokens: { in: chat.usage.prompt_tokens, out: chat.usage.completion_tokens },
});
async function* eventsOf(chunks: AsyncIterable<object>): AsyncIterable<object> {
  for await (const chunk of chunks as AsyncIterable<Json>) {
    const text = chunk.choices?.[0]?.delta?.content;
    if (typeof text === 'string' && text !== '') yield { type: 'echo.delta', text };
    if (chunk.usage) yield { type: 'echo.done', tokens: { in: chunk.usage.prompt_tokens, out: chunk.usage.completion_tokens } };
  }
}

/** Errors in the toy's own envelope. */
const echoErrors: WireErrorFormat = {
  envelope: (error, answer) => ({ echo_error: { message: error.message, status: answer.status } }),
  streamFrame: (error) => `event: echo.error\ndata: ${JSON.stringify({ message: error.message })}\n\n`,
};

export const echoWire: WireFormat<EchoBody> = {
  path: '/echo',
  summary: 'Echo through a chat model (a test wire)',
  body: EchoBody,
  response: EchoAnswer,
  serializedBySchema: false,
  run: async (services, caller, body, context) => answerOf(await services.chatCompletions.create(caller, chatBodyOf(body, false), context)),
  stream: {
    requested: (body) => body.stream === true,
    open: async (services, caller, body, context) => eventsOf(await services.chatCompletions.openStream(caller, chatBodyOf(body, true), context)),
    framing: 'named',
    event: EchoEvent,
    description: 'server-sent events, `echo.delta` then `echo.done`',
    carriesUsage: (event) => event.type === 'echo.done',
  },
  gateway: true,
  batch: { serves: (model) => model.entry.routes.includes('chat') },
  errors: echoErrors,
};
