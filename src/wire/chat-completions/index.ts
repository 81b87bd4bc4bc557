/** The chat completions wire (OpenAI's `POST /v1/chat/completions`): JSON, or with `stream: true` chunks ending `[DONE]`. */
import { carriesUsageObject, streamsWhenAsked, type WireFormat } from '../wire-format.js';
import { ChatCompletionBody, type ChatCompletionRequestBody } from './body.js';
import { ChatCompletionChunk, ChatCompletionObject } from './response.js';
import { openAiLabels } from '../call-labels.js';

export const chatCompletionsWire: WireFormat<ChatCompletionRequestBody> = {
  path: '/chat/completions',
  summary: 'Create a chat completion (OpenAI-compatible; `stream: true` for SSE)',
  body: ChatCompletionBody,
  response: ChatCompletionObject,
  serializedBySchema: true,
  run: (services, caller, body, context) => services.chatCompletions.create(caller, body, context),
  stream: {
    requested: streamsWhenAsked,
    open: (services, caller, body, context) => services.chatCompletions.openStream(caller, body, context),
    framing: 'done',
    event: ChatCompletionChunk,
    description: 'server-sent events, one `data: <ChatCompletionChunk JSON>` per chunk, ending `data: [DONE]`',
    carriesUsage: carriesUsageObject,
  },
  gateway: true,
  labels: openAiLabels,
  batch: { serves: (model) => model.entry.routes.includes('chat') },
};
