/** Where one OpenAI-protocol attempt goes: the deployment's engine, key and timeout, and the model name it is asked for. */
import type { Deployment, ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { UpstreamTarget } from './client.js';

const SINGLE_ENGINE_CONNECT_ATTEMPTS = 3;

/** The request for one deployment; a model with other deployments moves on instead of retrying a refused connection. */
export function targetOf(model: ModelSpec, deployment: Deployment): UpstreamTarget {
  const connectAttempts = model.binding.deployments.length > 1 ? 1 : SINGLE_ENGINE_CONNECT_ATTEMPTS;
  return { modelId: model.id, baseUrl: deployment.baseUrl, apiKey: deployment.apiKey, timeoutMs: deployment.timeoutMs, connectAttempts };
}

/** The `model` the engine is asked for: the deployment's `upstream_model`, else the model's id. */
export const upstreamName = (model: ModelSpec, deployment: Deployment): string => deployment.upstreamModel ?? model.id;
