/**
 * The composition root, shared by the server, the worker process and the CLI: the core,
 * then every feature in FEATURES, each given the core's services and the features before it. Adding a feature is its
 * file under src/composition and one line in FEATURES; what it returns (shared routes,
 * scopes, workers, outbox handlers, payer debits, line meters, readiness, close) is
 * wired here, and closed in reverse order.
 */
import { unbatchableEndpoints } from '../config/batch-config.js';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { AppParts } from '../http/app.js';
import type { Readiness } from '../http/routes/ops.js';
import type { ScopeDeclaration } from '../http/scopes/api-scope.js';
import type { BackgroundWorker } from '../worker/background-worker.js';
import { createBatchesFeature } from './batches.js';
import { createConsoleFeature } from './console.js';
import { createCore, type CoreOverrides, type CoreServices } from './core.js';
import { createDecisionFeature } from './decision.js';
import type { Feature, SharedRoutes } from './feature.js';
import { createGatewayFeature } from './gateway.js';
import { createMcpFeature } from './mcp.js';
import { createPeopleFeature } from './people.js';
import { createRequestLogFeature } from './request-log.js';
import { createResponsesFeature } from './responses.js';
import { createStorefrontFeature } from './storefront.js';

/** Every feature beside the core, in the order their routes and scopes are mounted. */
export const FEATURES = {
  batches: createBatchesFeature,
  responses: createResponsesFeature,
  decision: createDecisionFeature,
  gateway: createGatewayFeature,
  storefront: createStorefrontFeature,
  people: createPeopleFeature,
  console: createConsoleFeature,
  mcp: createMcpFeature,
  requestLog: createRequestLogFeature,
};

export type Features = { [Name in keyof typeof FEATURES]: Awaited<ReturnType<(typeof FEATURES)[Name]>> };

/** Everything the process runs: what buildApp mounts, the workers, and each feature's services. */
export interface Assembly extends AppParts {
  core: CoreServices;
  features: Features;
  workers: readonly BackgroundWorker[];
  startWorkers(): void;
  close(): Promise<void>;
}

export type { CoreOverrides };

/**
 * Builds the core (applying pending migrations) and every feature; a `batches.endpoints`
 * naming an endpoint none of them batches is a ConfigError, with everything closed again.
 */
export async function assemble(config: Readonly<Config>, overrides: CoreOverrides = {}): Promise<Assembly> {
  const core = await createCore(config, overrides);
  const features = await createFeatures(core.services);
  const all: Feature<unknown>[] = [core, ...Object.values(features)];
  register(core.services, all);
  const closeAll = async () => {
    for (const feature of all.toReversed()) await feature.close?.();
  };
  // Which endpoints can be batched is known now, with every feature's: the configuration may name only those.
  const unbatchable = unbatchableEndpoints(config.batches.endpoints, [...core.services.batchEndpoints.keys()]);
  if (unbatchable.length > 0) {
    await closeAll();
    throw new ConfigError(unbatchable, config.configFile ?? 'environment');
  }
  const shared: SharedRoutes = { api: all.flatMap((f) => f.routes?.api ?? []), admin: all.flatMap((f) => f.routes?.admin ?? []) };
  const scopes = all.flatMap((f) => f.scopes?.(shared) ?? []).filter((scope): scope is ScopeDeclaration => scope !== null);
  const workers = all.flatMap((f) => f.workers ?? []);
  let workersStarted = false;
  return {
    config,
    logger: core.services.logger,
    metrics: core.services.metrics,
    sockets: core.services.sockets,
    core: core.services,
    features,
    scopes,
    workers,
    startWorkers() {
      if (workersStarted) return;
      workersStarted = true;
      for (const worker of workers) worker.start();
    },
    readiness: () => readinessOf(all, core.services),
    async close() {
      await Promise.allSettled(workers.map((w) => w.stop()));
      await closeAll();
    },
  };
}

/**
 * Each feature in FEATURES order, given the core and the features before it; a feature
 * that names one listed after it fails here, at start-up, saying so.
 */
async function createFeatures(core: CoreServices): Promise<Features> {
  const built: Partial<Record<keyof Features, Feature<unknown>>> = {};
  const earlier = new Proxy(built, {
    get(target, name) {
      const feature = target[name as keyof Features];
      if (!feature) throw new Error(`feature ${String(name)} must come before the features that use it in FEATURES`);
      return feature;
    },
  }) as Features;
  for (const name of Object.keys(FEATURES) as (keyof Features)[]) built[name] = await FEATURES[name](core, earlier);
  return built as Features;
}

/** The features' outbox handlers, payer debits and line meters join the core's tables, by kind; their batch endpoints, by url. */
function register(core: CoreServices, features: readonly Feature<unknown>[]): void {
  for (const feature of features) {
    for (const [kind, handler] of feature.outboxHandlers ?? []) core.outbox.handlers.set(kind, handler);
    for (const [kind, debit] of feature.payerDebits ?? []) core.payerDebits.set(kind, debit);
    for (const [kind, factory] of feature.lineMeters ?? []) core.meters.register(kind, factory);
    for (const [url, endpoint] of feature.batchEndpoints ?? []) core.batchEndpoints.set(url, endpoint);
  }
}

async function readinessOf(features: readonly Feature<unknown>[], core: CoreServices): Promise<Readiness> {
  const [reports, { upstreams, deployments }, runtimes] = await Promise.all([
    Promise.all(features.map((f) => f.readiness?.() ?? {})),
    core.upstreams(),
    core.missingRuntimes(),
  ]);
  const checks: Record<string, string> = Object.assign({}, ...reports);
  const notes: Record<string, string> = Object.assign({}, ...features.map((f) => f.notes?.() ?? {}));
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks, upstreams, deployments, runtimes, notes };
}
