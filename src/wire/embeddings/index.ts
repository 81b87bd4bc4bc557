/** The embeddings wire (`POST /v1/embeddings`): one vector per input, never streamed. */
import type { WireFormat } from '../wire-format.js';
import { EmbeddingsBody, type EmbeddingsRequestBody } from './body.js';
import { EmbeddingList } from './response.js';
import { openAiLabels } from '../call-labels.js';

export const embeddingsWire: WireFormat<EmbeddingsRequestBody> = {
  path: '/embeddings',
  summary: 'Create embeddings (one vector per input)',
  body: EmbeddingsBody,
  response: EmbeddingList,
  serializedBySchema: false,
  run: (services, caller, body, context) => services.embeddings.create(caller, body, context),
  gateway: true,
  labels: openAiLabels,
  batch: { serves: (model) => model.entry.routes.includes('embeddings') },
};
