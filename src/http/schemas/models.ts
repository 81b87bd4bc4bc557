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
