/** `GET /v1/catalog`: the models page's view of the catalog. */
import { Type } from '@sinclair/typebox';
import { DeploymentStates } from './deployments.js';

export const Catalog = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      object: Type.Literal('catalog_model'),
      task: Type.String(),
      routes: Type.Array(Type.String(), { description: 'the routes that serve it, e.g. /v1/chat/completions' }),
      runtime: Type.String({ description: 'the upstream protocol (openai, bedrock) of an upstream model, or onnx or gguf (in-process)' }),
      upstream: Type.Boolean({ description: 'served by an upstream engine or provider rather than in-process' }),
      ready: Type.Boolean(),
      unreachable_since: Type.Union([Type.String(), Type.Null()], {
        description: 'an upstream model whose engine did not answer its last probe: since when (ISO 8601); null when it answered, or for an in-process model',
      }),
      unreachable_reason: Type.Union([Type.String(), Type.Null()], { description: 'why not, when unreachable: an error code (no host), e.g. ECONNREFUSED' }),
      deployments: Type.Optional(DeploymentStates),
      detail: Type.Union([Type.String(), Type.Null()], { description: 'why it cannot run, when not ready' }),
      fixes: Type.Array(Type.String(), { description: 'what makes it run, when not ready' }),
      context_length: Type.Integer(),
      price: Type.Object({ input_per_million_usd: Type.Number(), output_per_million_usd: Type.Number() }),
    }),
  ),
});
