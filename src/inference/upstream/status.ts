/** An upstream model's state for readiness and the model pages: each deployment's, from the router and the probes. */
import type { ModelConfig } from '../../config/schema.js';
import type { BackendStatus } from '../../domain/models/inference-backend.port.js';
import type { Router } from '../routing/router.js';
import type { UpstreamProbes } from './probes.js';

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
