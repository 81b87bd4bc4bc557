/**
 * The `azure` protocol: Azure OpenAI, which speaks the OpenAI format (the openai
 * protocol's request and answer mapping, stream decoder and usage reader serve it as
 * they are; protocols.ts builds the adapter with this endpoint) at its own paths and with
 * its own auth. The deployment's `base_url` is the resource's endpoint
 * (`https://<resource>.openai.azure.com`):
 *
 * - the v1 API: `POST {base_url}/openai/v1/chat/completions`, `model` the Azure deployment
 *   name (the deployment's `upstream_model`);
 * - the classic form (a deployment with `api_version`):
 *   `POST {base_url}/openai/deployments/{upstream_model}/chat/completions?api-version=…`.
 *
 * The key goes in the `api-key` header; with `auth: bearer` it is a Microsoft Entra ID
 * token, sent as `Authorization: Bearer`. Azure's errors are OpenAI's envelope; a prompt
 * its content filter refuses is a 400 with code `content_filter`, kept as the client's
 * 400, and a filtered answer ends with finish_reason `content_filter`, carried as sent.
 */
import type { Deployment } from '../../../../domain/models/model-spec.types.js';
import { bearer, type HttpEndpoint, type OpenAIOperation } from '../../endpoint.js';
import { upstreamHttpError } from '../../openai-errors.js';

function azurePath(operation: OpenAIOperation, deployment: Deployment, upstreamModel: string): string {
  if (deployment.apiVersion === undefined) return `/openai/v1${operation}`;
  return `/openai/deployments/${encodeURIComponent(upstreamModel)}${operation}?api-version=${encodeURIComponent(deployment.apiVersion)}`;
}

function azureHeaders(deployment: Deployment): Record<string, string> {
  if (deployment.auth === 'bearer') return bearer(deployment);
  return deployment.apiKey ? { 'api-key': deployment.apiKey } : {};
}

/** The resource's models list: the v1 API's, or the classic form's with its api-version. */
const azureModelsPath = (deployment: Deployment): string =>
  deployment.apiVersion === undefined ? '/openai/v1/models' : `/openai/models?api-version=${encodeURIComponent(deployment.apiVersion)}`;

export const azureEndpoint: HttpEndpoint = {
  path: azurePath,
  headers: azureHeaders,
  errorOf: upstreamHttpError,
  modelsPath: azureModelsPath,
  notFoundHint: "check that base_url is the resource's endpoint (https://<resource>.openai.azure.com)",
};
