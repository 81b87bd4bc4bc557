/** GET /v1/models and GET /v1/models/{id}: the catalog in OpenAI's model-list shape. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.js';
import type { ModelConfig } from '../../../config/schema.js';
import { notFound } from '../../../domain/shared/errors.js';
import { ROUTE_PATHS } from '../../../inference/registry.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ModelIdParams, ModelList, ModelObject } from '../../schemas/models.js';

/** Catalog models have no creation date of their own; a fixed one keeps answers stable. */
const CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

const RELEASE_DATE = '2026-01-01';

const modelWire = (model: ModelConfig) => ({ id: model.id, object: 'model', created: CREATED, owned_by: 'sluice' });

/** System One clients read `models: [{name, description, release_date}]` from the same list. */
const systemOneEntry = (model: ModelConfig) => ({
  name: model.id,
  description: `${model.entry.task} model, served on ${model.entry.routes.map((r) => ROUTE_PATHS[r]).join(', ')}`,
  release_date: RELEASE_DATE,
});

export function registerModelsRoutes(scope: FastifyInstance, container: Container): void {
  const { registry } = container;
  const list = { object: 'list', data: registry.list().map(modelWire), models: registry.list().map(systemOneEntry) };
  scope.get('/models', { schema: { tags: ['models'], summary: 'List models', response: { 200: ModelList } }, ...serializeAsBefore }, async () => list);
  scope.get<{ Params: { id: string } }>(
    '/models/:id',
    { schema: { tags: ['models'], summary: 'Retrieve a model', params: ModelIdParams, response: { 200: ModelObject } }, ...serializeAsBefore },
    async (request) => {
      const model = registry.find(request.params.id);
      if (!model) throw notFound(`The model \`${request.params.id}\` does not exist`, 'model_not_found', 'model');
      // The finding of the last probe; a stale one is refreshed in the background, never awaited here.
      registry.refreshUpstreams([model]).catch((err: unknown) => request.log.warn({ err }, 'upstream probe failed'));
      const { unreachable, missingRuntime, publicDetail, remedy } = await registry.status(model);
      if (unreachable) return { ...modelWire(model), unreachable_since: unreachable.since };
      if (missingRuntime) return { ...modelWire(model), not_ready: `${publicDetail}: ${remedy}` };
      return modelWire(model);
    },
  );
}
