/** The legacy text completions wire (`POST /v1/completions`): JSON, or with `stream: true` chunks ending `[DONE]`. */
import { carriesUsageObject, streamsWhenAsked, type WireFormat } from '../wire-format.js';
import { CompletionBody, type CompletionRequestBody } from './body.js';
import { TextCompletion } from './response.js';
import { openAiLabels } from '../call-labels.js';

export const completionsWire: WireFormat<CompletionRequestBody> = {
  path: '/completions',
  summary: 'Create a text completion (legacy; chat models served by an upstream engine; `stream: true` for SSE)',
  body: CompletionBody,
  response: TextCompletion,
  serializedBySchema: true,
  run: (services, caller, body, context) => services.completions.create(caller, body, context),
  stream: {
    requested: streamsWhenAsked,
    open: (services, caller, body, context) => services.completions.openStream(caller, body, context),
    framing: 'done',
    event: TextCompletion,
    description: 'server-sent events, one `data: <ChatCompletionChunk JSON>` per chunk, ending `data: [DONE]`',
    carriesUsage: carriesUsageObject,
  },
  gateway: false,
  labels: openAiLabels,
  // Served only by chat models behind an upstream engine.
  batch: { serves: (model) => model.entry.routes.includes('chat') && model.binding.upstream !== null },
};
