/** POST /v1/systemone: the decision service over the model registry's scorers. */
import { decisionBatchEndpoint } from '../domain/decision/batch-endpoint.js';
import { DecisionService } from '../domain/decision/decision.service.js';
import { PackDecisionScorer } from '../inference/decision/pack-decision-scorer.js';
import { bindRoutes } from '../http/route-module.js';
import { registerDecisionRoute } from '../http/routes/v1/systemone.js';
import type { CoreInference, CoreInfrastructure } from './core.js';
import type { Feature } from './feature.js';

export function createDecisionFeature({ config, registry }: CoreInfrastructure & CoreInference): Feature<DecisionService> {
  const { scorers, nliModel, llmModel } = config.decision;
  const decision = new DecisionService(registry, new PackDecisionScorer(registry, { byModel: scorers, nliModel, llmModel }), config.decision);
  return {
    services: decision,
    routes: { api: [bindRoutes(registerDecisionRoute, { decision })] },
    batchEndpoints: new Map([['/v1/systemone', decisionBatchEndpoint(decision)]]),
  };
}
