/** GET /v1/models and /v1/models/{id}: OpenAI's model-list shape. */
import { Type } from '@sinclair/typebox';
import { DeploymentStates } from './deployments.js';

export const ModelIdParams = Type.Object({ id: Type.String({ description: 'a model id' }) });

export const ModelObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer({ description: 'Unix timestamp, seconds (fixed: catalog models have no date of their own)' }),
  owned_by: Type.String(),
  unreachable_since: Type.Optional(
    Type.String({
      description: 'Sluice extension, on GET /v1/models/{id}: the model’s upstream has not answered since this time (ISO 8601); calls still try it',
    }),
  ),
  deployments: Type.Optional(DeploymentStates),
  not_ready: Type.Optional(
    Type.String({
      description: 'Sluice extension, on GET /v1/models/{id}: the model’s files are in place but the in-process runtime that runs them is not installed, and the command that installs it',
    }),
  ),
});

export const SystemOneModel = Type.Object({ name: Type.String(), description: Type.String(), release_date: Type.String({ description: 'YYYY-MM-DD' }) });

export const ModelList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(ModelObject),
  models: Type.Array(SystemOneModel, { description: 'the same models in System One’s list shape' }),
});

/** Anthropic's Models API shapes, answered to a request with an `anthropic-version` header. */
export const AnthropicModelInfo = Type.Object({
  type: Type.Literal('model'),
  id: Type.String({ description: 'a model id, or an alias of one' }),
  display_name: Type.String(),
  created_at: Type.String({ description: 'RFC 3339 (fixed: models have no release date of their own)' }),
  max_input_tokens: Type.Integer({ description: 'the model’s context length' }),
});

export const AnthropicModelList = Type.Object({
  data: Type.Array(AnthropicModelInfo),
  has_more: Type.Boolean(),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
});

export const AnthropicModelListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: 'Anthropic shape only: models per page' })),
  after_id: Type.Optional(Type.String({ description: 'Anthropic shape only: the page after this id' })),
  before_id: Type.Optional(Type.String({ description: 'Anthropic shape only: the page before this id' })),
});
