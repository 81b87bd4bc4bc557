/**
 * The core every feature builds on, composed of three parts, each in its own file:
 * infrastructure (config, logger, clock, metrics, database, blobs, rate limiter:
 * core-infrastructure.ts), billing (keys, projects, billing, meters, the outbox:
 * core-billing.ts) and inference (the registry, inference services and their routes:
 * core-inference.ts). Here: the /v1 and admin scopes that mount every feature's shared
 * routes, the core's own admin and usage routes, and the parts' readiness and close.
 */
import type { Config } from '../config/schema.js';
import { bindRoutes } from '../http/route-module.js';
import { v1Scope } from '../http/scopes/v1.js';
import { adminScope } from '../http/scopes/admin.js';
import { registerUsageRoutes } from '../http/routes/v1/usage.js';
import { registerAdminRoutes } from '../http/routes/admin/index.js';
import { registerAdminSpendRoute } from '../http/routes/admin/spend.js';
import { registerSpendRoute } from '../http/routes/v1/spend.js';
import { registerOutboxAdmin } from '../http/routes/admin/outbox.js';
import { registerKeyAdmin } from '../http/routes/admin/keys.js';
import type { Feature } from './feature.js';
import { createInfrastructure, type CoreInfrastructure, type InfrastructureOverrides } from './core-infrastructure.js';
import { createBilling, type CoreBilling } from './core-billing.js';
import { createInference, type CoreInference, type InferenceOverrides } from './core-inference.js';

export type { CoreInfrastructure, CoreBilling, CoreInference };
export { createLogger } from './core-infrastructure.js';

/** What the assembly may replace: the infrastructure's (database, blobs, clock, …), the upstream protocols and the wire formats. */
export interface CoreOverrides extends InfrastructureOverrides, InferenceOverrides {}

/** The core's services: its three parts side by side; a feature names the parts it takes. */
export type CoreServices = CoreInfrastructure & CoreBilling & CoreInference;

export type Core = Feature<CoreServices>;

/** Builds the core and applies pending migrations. */
export async function createCore(config: Readonly<Config>, overrides: CoreOverrides = {}): Promise<Core> {
  const infrastructure = await createInfrastructure(config, overrides);
  const billing = createBilling(infrastructure.services);
  const inference = createInference(infrastructure.services, overrides);
  const { projects, outbox, authenticator, creditMeter, keyMeter, apiKeyRateLimit, audit } = billing.services;
  const { clock } = infrastructure.services;
  return {
    services: { ...infrastructure.services, ...billing.services, ...inference.services },
    routes: {
      api: [...inference.services.apiRoutes, bindRoutes(registerUsageRoutes, { projects, clock }), bindRoutes(registerSpendRoute, { projects, clock })],
      admin: [bindRoutes(registerAdminRoutes, { projects, clock, audit }), bindRoutes(registerAdminSpendRoute, { projects, clock }), bindRoutes(registerKeyAdmin, { projects, audit }), bindRoutes(registerOutboxAdmin, { outbox: outbox.service })],
    },
    scopes: (shared) => [
      adminScope({ adminToken: config.adminToken, meter: creditMeter, rateLimit: apiKeyRateLimit }, shared.admin),
      v1Scope({ authenticator, meter: keyMeter, rateLimit: apiKeyRateLimit }, [...shared.api, ...inference.services.socketRoutes]),
    ],
    workers: [outbox.deliverer],
    readiness: () => infrastructure.readiness(),
    async close() {
      await inference.close();
      await billing.close();
      await infrastructure.close();
    },
  };
}
