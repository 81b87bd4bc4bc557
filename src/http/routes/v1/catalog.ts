/**
 * `GET /v1/catalog`: every catalog model with the routes it serves, the runtime that
 * serves it, whether it can run now (and if not, how to make it run), whether its
 * upstream answered the last probe, and its price. The console's models page reads it;
 * `/v1/models` keeps OpenAI's shape.
 *
 * Reachability rides on this one list rather than on a GET /v1/models/{id} per model or
 * on /readyz: the upstreams whose finding is stale are probed once, together (one probe
 * per base_url, each bounded by 2 s, findings kept 10 s, 3 s when down), and awaited, so
 * the page's first answer already tells the truth; per-model GETs would cost one request
 * each and only start the probe (they answer the previous finding), and /readyz would add
 * the database and blob checks and give the finding as text to parse.
 */
import type { FastifyInstance } from 'fastify';
import type { ModelDirectory } from '../../../domain/models/model-resolver.port.js';
import type { ModelConfig } from '../../../config/schema.js';
import { ROUTE_PATHS, type ModelStatus } from '../../../domain/models/model-resolver.port.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { Catalog } from '../../schemas/catalog.js';
import { deploymentWire } from '../../schemas/deployments.js';

/** What makes a model that cannot run usable: the same remedies its 503 names. */
function fixesOf(model: ModelConfig, status: ModelStatus): string[] {
  const fixes = [`set models.${model.id}.base_url in sluice.yaml to an OpenAI-compatible server (vLLM, SGLang, llama.cpp server, Ollama)`];
  // Its files are there; the runtime that runs them is what is missing.
  if (status.missingRuntime && status.remedy) fixes.push(status.remedy);
  else if (model.entry.hubRepo && !model.binding.upstream) fixes.push(`run \`sluice models pull ${model.id}\``);
  return fixes;
}

export function registerCatalogRoute(scope: FastifyInstance, { registry }: { registry: ModelDirectory }): void {
  scope.get('/catalog', { schema: { tags: ['models'], summary: 'Models with their routes, runtime, state and price', response: { 200: Catalog } }, ...serializeAsBefore }, async (request) => {
    // A probe that fails to run leaves the previous findings: the list still answers.
    await registry.refreshUpstreams().catch((err: unknown) => request.log.warn({ err }, 'upstream probe failed'));
    const data = await Promise.all(
      registry.list().map(async (model) => {
        const status = await registry.status(model);
        return {
          id: model.id,
          object: 'catalog_model' as const,
          task: model.entry.task,
          routes: model.entry.routes.map((route) => ROUTE_PATHS[route]),
          runtime: status.backend,
          upstream: model.binding.upstream !== null,
          ready: status.ready,
          unreachable_since: status.unreachable?.since ?? null,
          unreachable_reason: status.unreachable?.reason ?? null,
          detail: status.ready ? null : (status.publicDetail ?? status.detail),
          fixes: status.ready ? [] : fixesOf(model, status),
          context_length: model.contextLength,
          price: { input_per_million_usd: model.price.inputPerMillionUsd, output_per_million_usd: model.price.outputPerMillionUsd },
          // Listed when sluice.yaml gives the model several engines.
          ...(status.deployments && status.deployments.length > 1 && { deployments: status.deployments.map(deploymentWire) }),
        };
      }),
    );
    return { object: 'list' as const, data };
  });
}
