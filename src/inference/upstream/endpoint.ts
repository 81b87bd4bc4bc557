/**
 * Where and how an HTTP protocol sends one operation to a deployment: the path under the
 * deployment's base URL, the auth and version headers, and the protocol's reading of a
 * failure status. The OpenAI-format adapter takes one (OpenAI-compatible engines and the
 * hosted presets, Azure OpenAI's two forms), so Azure reuses the OpenAI mapping.
 */
import type { Deployment, ModelSpec } from '../../domain/models/model-spec.types.js';
import type { HttpErrorMapper } from './errors.js';
import type { UpstreamTarget } from './http-client.js';

/** The OpenAI-format operations, as their path under an OpenAI base URL. */
export type OpenAIOperation = '/chat/completions' | '/completions' | '/embeddings' | '/moderations';

export interface HttpEndpoint {
  /** The path (and query) of `operation` under the deployment's base URL. */
  path(operation: OpenAIOperation, deployment: Deployment, upstreamModel: string): string;
  /** The auth (and version) headers of a call to the deployment. */
  headers(deployment: Deployment): Record<string, string>;
  errorOf: HttpErrorMapper;
  /** The path of the models list (`sluice providers check`). */
  modelsPath(deployment: Deployment): string;
  /** What to check when that list is not found. */
  notFoundHint: string;
}

const SINGLE_ENGINE_CONNECT_ATTEMPTS = 3;

/** The request for one deployment; a model with other deployments moves on instead of retrying a refused connection. */
export function targetOf(model: ModelSpec, deployment: Deployment, endpoint: Pick<HttpEndpoint, 'headers'>): UpstreamTarget {
  const connectAttempts = model.binding.deployments.length > 1 ? 1 : SINGLE_ENGINE_CONNECT_ATTEMPTS;
  return {
    modelId: model.id,
    baseUrl: deployment.baseUrl,
    headers: endpoint.headers(deployment),
    secret: deployment.apiKey,
    timeoutMs: deployment.timeoutMs,
    connectAttempts,
  };
}

/** The `model` the engine is asked for: the deployment's `upstream_model`, else the model's id. */
export const upstreamName = (model: ModelSpec, deployment: Deployment): string => deployment.upstreamModel ?? model.id;

/** `Authorization: Bearer <key>`, when the deployment has a key. */
export const bearer = (deployment: Deployment): Record<string, string> => (deployment.apiKey ? { authorization: `Bearer ${deployment.apiKey}` } : {});
