/** The openai backend's side of routing: one deployment's request target, and the model's state for status pages. */
import type { Deployment, ModelConfig } from '../../../config/schema.js';
import type { BackendStatus } from '../../../domain/models/inference-backend.port.js';
import type { Router } from '../../routing/router.js';
import type { UpstreamTarget } from './client.js';
import type { UpstreamProbes } from './upstream-probes.js';

/** The request for one deployment; a model with other deployments moves on instead of retrying a refused connection. */
export function targetOf(model: ModelConfig, deployment: Deployment): UpstreamTarget {
  const connectAttempts = model.binding.deployments.length > 1 ? 1 : SINGLE_ENGINE_CONNECT_ATTEMPTS;
  return { modelId: model.id, baseUrl: deployment.baseUrl, apiKey: deployment.apiKey, timeoutMs: deployment.timeoutMs, connectAttempts };
}

const SINGLE_ENGINE_CONNECT_ATTEMPTS = 3;

export const upstreamName = (model: ModelConfig, deployment: Deployment): string => deployment.upstreamModel ?? model.id;

/** The model's state for readiness and the model pages: each deployment's, and `unreachable` once none answers. */
export function upstreamStatus(model: ModelConfig, router: Router, probes: UpstreamProbes): BackendStatus {
  const deployments = router.states(model);
  if (model.binding.deployments.length === 1) {
    // One engine (base_url): what its probe found, in the operator's terms.
    const baseUrl = model.binding.deployments[0]!.baseUrl;
    const state = probes.peek(baseUrl);
    if (state.kind !== 'unreachable') return { ready: true, detail: `upstream ${baseUrl}`, deployments };
    const since = new Date(state.sinceMs).toISOString();
    return { ready: true, detail: `upstream ${baseUrl} unreachable since ${since} (${state.reason})`, unreachable: { since, reason: state.reason }, deployments };
  }
  const detail = deployments.map((d) => `${d.id} ${d.state.replace('_', ' ')}${d.until ? ` until ${d.until}` : ''}${d.since ? ` since ${d.since} (${d.reason})` : ''}`);
  const status: BackendStatus = { ready: true, detail: `upstream deployments: ${detail.join('; ')}`, deployments };
  const unreachable = deployments.filter((d) => d.state === 'unreachable');
  if (unreachable.length === deployments.length) {
    const first = unreachable.reduce((a, b) => (a.since! <= b.since! ? a : b));
    status.unreachable = { since: first.since!, reason: first.reason! };
  }
  return status;
}
