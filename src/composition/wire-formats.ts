/**
 * The inbound wire formats (src/wire/formats.ts, or the list the app is assembled with)
 * bound to the services that answer them: each format's route, mounted on `/v1` and, when
 * the format says so, on the gateway; and the batch endpoint of each format a batch may
 * name, run by the same call behind the same validator as its route, labelled as its
 * route labels a call (a line has no headers: its body's tags and its key's).
 */
import type { BatchEndpoint, LineCallContext } from '../domain/batches/batch-endpoints.js';
import type { Caller } from '../domain/identity/caller.js';
import { wireEndpoint } from '../wire/batch-endpoint.js';
import { callLabelsOf } from '../wire/call-labels.js';
import type { ModelDirectory } from '../domain/models/model-resolver.port.js';
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import { bindWireRoute, type BoundWireRoute } from '../http/routes/v1/wire-route.js';
import type { BoundRoutes } from '../http/route-module.js';
import type { RequestLogSink } from '../domain/request-log/request-log.port.js';
import { v1PathOf, type WireFormat, type WireServices } from '../wire/wire-format.js';

/** Each format's route, in the list's order. */
export const wireRoutes = (formats: readonly WireFormat[], services: WireServices, log: { readonly value: RequestLogSink }): BoundWireRoute[] =>
  formats.map((format) => bindWireRoute(format, services, log));

/** The route of `format` among the bound ones (a scope that mounts one format's route alone, e.g. the storefront's chat). */
export function wireRouteOf(routes: readonly BoundWireRoute[], format: WireFormat): BoundRoutes {
  const found = routes.find((route) => route.format === format);
  if (!found) throw new Error(`the wire format of ${format.path} is not in the list the app was assembled with`);
  return found.routes;
}

/** In-process, or an upstream model with at least one engine configured. */
const runsHere = (model: ModelSpec) => !model.binding.upstream || model.binding.upstream.deployments.length > 0;

/**
 * The batch endpoints, by `/v1` url: a line's body checked by its format's body schema
 * and run by its format's call (never a stream). An endpoint is served when a model that
 * runs here serves the format's lines.
 */
export function wireBatchEndpoints(formats: readonly WireFormat[], services: WireServices, models: Pick<ModelDirectory, 'list'>): Map<string, BatchEndpoint> {
  const endpoints = new Map<string, BatchEndpoint>();
  for (const format of formats) {
    const { batch } = format;
    if (!batch) continue;
    const served = () => models.list().some((model) => runsHere(model) && batch.serves(model));
    const run = (caller: Caller, body: unknown, context: LineCallContext) =>
      format.run(services, caller, body, { ...context, ...callLabelsOf(format, body, [], caller.principal.policy) });
    endpoints.set(v1PathOf(format), wireEndpoint(format.body, run, served));
  }
  return endpoints;
}
