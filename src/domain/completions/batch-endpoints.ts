/**
 * The inference routes as batch endpoints: each line's body is checked by its route's
 * compiled schema and run by the route's own service (create(), never a stream).
 * An endpoint is served when a model lists its route and can run here: in-process (once
 * pulled), or behind an upstream engine sluice.yaml binds it to. `/v1/completions` is
 * served only by chat models behind an upstream engine.
 */
import { wireEndpoint, type BatchEndpoint } from '../batches/batch-endpoints.js';
import type { ModelDirectory } from '../models/model-resolver.port.js';
import type { ModelRoute, ModelSpec } from '../models/model-spec.types.js';
import { ChatCompletionBody } from '../../wire/chat-completions.js';
import { CompletionBody } from '../../wire/completions.js';
import { EmbeddingsBody } from '../../wire/embeddings.js';
import { ModerationsBody } from '../../wire/moderations.js';
import { ResponsesBody } from '../../wire/responses.js';
import type { InferenceServices } from './index.js';

/** In-process, or an upstream model with at least one engine configured. */
const runsHere = (model: ModelSpec) => !model.binding.upstream || model.binding.upstream.deployments.length > 0;

export function inferenceBatchEndpoints(services: InferenceServices, models: Pick<ModelDirectory, 'list'>): Map<string, BatchEndpoint> {
  const servedBy = (test: (model: ModelSpec) => boolean) => () => models.list().some((m) => runsHere(m) && test(m));
  const onRoute = (route: ModelRoute) => servedBy((m) => m.entry.routes.includes(route));
  return new Map([
    ['/v1/chat/completions', wireEndpoint(ChatCompletionBody, (c, body, ctx) => services.chatCompletions.create(c, body, ctx), onRoute('chat'))],
    [
      '/v1/completions',
      wireEndpoint(
        CompletionBody,
        (c, body, ctx) => services.completions.create(c, body, ctx),
        servedBy((m) => m.entry.routes.includes('chat') && m.binding.upstream !== null),
      ),
    ],
    ['/v1/responses', wireEndpoint(ResponsesBody, (c, body, ctx) => services.responses.create(c, body, ctx), onRoute('responses'))],
    ['/v1/embeddings', wireEndpoint(EmbeddingsBody, (c, body, ctx) => services.embeddings.create(c, body, ctx), onRoute('embeddings'))],
    ['/v1/moderations', wireEndpoint(ModerationsBody, (c, body, ctx) => services.moderations.create(c, body, ctx), onRoute('moderations'))],
  ]);
}
