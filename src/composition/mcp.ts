/**
 * The MCP endpoint (`mcp.prefix`, default /mcp): the models as tools, over the services
 * the other features built (the decision route's, the batches', and the storefront's
 * callers and x402 rail when it is on). It comes after them in FEATURES.
 */
import type { DecisionService } from '../domain/decision/decision.service.js';
import { mcpScopes } from '../http/scopes/mcp.js';
import type { BatchesParts } from './batches.js';
import type { CoreBilling, CoreInference, CoreInfrastructure } from './core.js';
import type { Feature, Peers } from './feature.js';
import type { Storefront } from './storefront.js';

export function createMcpFeature(
  core: CoreInfrastructure & CoreBilling & CoreInference,
  earlier: Peers<{ decision: DecisionService; batches: BatchesParts; storefront: Storefront | null }>,
): Feature<null> {
  const decision = earlier.decision.services;
  const { batches, files, batchable } = earlier.batches.services;
  const storefront = earlier.storefront.services;
  const { inference } = core;
  const scopes = mcpScopes({
    prefix: core.config.mcp.prefix,
    authenticator: core.authenticator,
    meter: core.keyMeter,
    rateLimit: core.apiKeyRateLimit,
    endpoint: {
      models: core.registry,
      services: {
        chat: inference.chatCompletions,
        embeddings: inference.embeddings,
        moderations: inference.moderations,
        transcription: core.transcription,
        decision,
        batches,
        batchable,
        files,
      },
      anonymousLimiter: core.rateLimiter,
      log: core.requestLog,
    },
    storefront: storefront && {
      prefix: storefront.config.prefix,
      takesPerCall: storefront.config.x402 !== null || storefront.config.mpp !== null,
      sellers: storefront.sellers,
      meterOf: (seller) => storefront.meterOf(seller),
      tokens: storefront.tokens,
      purchases: storefront.purchases,
      priceOf: core.priceOf,
    },
  });
  return { services: null, scopes: () => scopes };
}
