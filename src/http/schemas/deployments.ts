/** The state of a model's upstream deployments, as API clients and the console see it: ids, never URLs or keys. */
import { Type } from '@sinclair/typebox';
import type { DeploymentStatus } from '../../domain/models/inference-backend.port.js';

export const DeploymentState = Type.Object({
  id: Type.String({ description: "the deployment's name in sluice.yaml" }),
  state: Type.Union([Type.Literal('ready'), Type.Literal('cooling_down'), Type.Literal('unreachable')]),
  until: Type.Union([Type.String(), Type.Null()], { description: 'when cooling down: until when (ISO 8601)' }),
  since: Type.Union([Type.String(), Type.Null()], { description: 'when unreachable: since when (ISO 8601)' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'when unreachable: an error code (no host), e.g. ECONNREFUSED' }),
});

export const DeploymentStates = Type.Array(DeploymentState, {
  description: 'Sluice extension: the engines that serve the model (when sluice.yaml lists several) and the state of each',
});

export const deploymentWire = (d: DeploymentStatus) => ({ id: d.id, state: d.state, until: d.until ?? null, since: d.since ?? null, reason: d.reason ?? null });
