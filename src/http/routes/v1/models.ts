/**
 * GET /v1/models and GET /v1/models/{id}: the catalog in OpenAI's model-list shape, or in
 * Anthropic's for an Anthropic client (anthropic-models.ts says which requests, and what
 * that list holds). A retrieve by alias answers under the name asked. A key whose policy
 * lists models sees only those: the others do not exist for it.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ModelDirectory } from '../../../domain/models/model-resolver.port.js';
import type { ModelConfig } from '../../../config/schema.js';
import { notFound } from '../../../domain/shared/errors.js';
import { modelAllowed } from '../../../domain/identity/model-access.js';
import type { KeyPolicy } from '../../../domain/identity/key-policy.types.js';
import { ROUTE_PATHS } from '../../../domain/models/model-resolver.port.js';
import { documentOnly, serializeAsBefore } from '../../schemas/document-only.js';
import { AnthropicModelInfo, AnthropicModelList, AnthropicModelListQuery, ModelIdParams, ModelList, ModelObject } from '../../schemas/models.js';
import { deploymentWire } from '../../schemas/deployments.js';
import { anthropicError, anthropicModelEntries, anthropicModelInfo, anthropicPage, wantsAnthropicShape } from './anthropic-models.js';

/** Catalog models have no creation date of their own; a fixed one keeps answers stable. */
const CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

const RELEASE_DATE = '2026-01-01';

const modelWire = (model: ModelConfig, name = model.id) => ({ id: name, object: 'model', created: CREATED, owned_by: 'sluice' });

/** System One clients read `models: [{name, description, release_date}]` from the same list. */
const systemOneEntry = (model: ModelConfig) => ({
  name: model.id,
  description: `${model.entry.task} model, served on ${model.entry.routes.map((r) => ROUTE_PATHS[r]).join(', ')}`,
  release_date: RELEASE_DATE,
});

export function registerModelsRoutes(scope: FastifyInstance, { registry }: { registry: ModelDirectory }): void {
  const list = { object: 'list', data: registry.list().map((m) => modelWire(m)), models: registry.list().map(systemOneEntry) };
  const anthropicEntries = anthropicModelEntries(registry);
  // The query is documented only: its values are read (and refused in Anthropic's envelope) by anthropicPage.
  const listSchema = {
    tags: ['models'],
    summary: 'List models (Anthropic’s shape with an anthropic-version header)',
    querystring: AnthropicModelListQuery,
    response: { 200: Type.Union([ModelList, AnthropicModelList]) },
  };
  /** The name a key may see: its model, and the alias it was named by. */
  const visible = (policy: KeyPolicy, name: string) => {
    const model = registry.find(name);
    return model !== undefined && modelAllowed(policy, model.id, registry.isAlias(name) ? name : null);
  };
  scope.get('/models', { schema: listSchema, ...documentOnly }, async (request, reply) => {
    const policy = request.caller?.principal.policy;
    const limited = policy?.models !== undefined;
    if (!wantsAnthropicShape(request)) {
      if (!limited) return list;
      return { object: 'list', data: list.data.filter((m) => visible(policy, m.id)), models: list.models.filter((m) => visible(policy, m.name)) };
    }
    const entries = limited ? anthropicEntries.filter((entry) => visible(policy, entry.id)) : anthropicEntries;
    const answer = anthropicPage(entries, request.query as Record<string, string | string[] | undefined>);
    return answer.refused === undefined ? answer.page : anthropicError(reply, 400, answer.refused);
  });
  scope.get<{ Params: { id: string } }>(
    '/models/:id',
    { schema: { tags: ['models'], summary: 'Retrieve a model (Anthropic’s shape with an anthropic-version header)', params: ModelIdParams, response: { 200: Type.Union([ModelObject, AnthropicModelInfo]) } }, ...serializeAsBefore },
    async (request, reply) => {
      const { id } = request.params;
      const policy = request.caller?.principal.policy;
      const found = registry.find(id);
      const model = found && modelAllowed(policy, found.id, registry.isAlias(id) ? id : null) ? found : undefined;
      if (wantsAnthropicShape(request)) {
        return model ? anthropicModelInfo(registry.isAlias(id) ? id : model.id, model) : anthropicError(reply, 404, `model: ${id} does not exist`);
      }
      if (!model) throw notFound(`The model \`${id}\` does not exist`, 'model_not_found', 'model');
      const name = registry.isAlias(id) ? id : model.id;
      // The finding of the last probe; a stale one is refreshed in the background, never awaited here.
      registry.refreshUpstreams([model]).catch((err: unknown) => request.log.warn({ err }, 'upstream probe failed'));
      const { unreachable, deployments, missingRuntime, publicDetail, remedy } = await registry.status(model);
      const wire: Record<string, unknown> = modelWire(model, name);
      if (unreachable) wire.unreachable_since = unreachable.since;
      else if (missingRuntime) wire.not_ready = `${publicDetail}: ${remedy}`;
      // A model with one engine (base_url) answers as before; several are listed with their state.
      if (deployments && deployments.length > 1) wire.deployments = deployments.map(deploymentWire);
      return wire;
    },
  );
}
