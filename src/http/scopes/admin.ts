/**
 * `/admin/v1`: the admin route modules (every feature's), for the operator: the admin
 * token as a bearer token, rate-limited like a key. Mounted only when SLUICE_ADMIN_TOKEN is set.
 */
import type { Meter } from '../../domain/billing/meter.js';
import { AdminTokenStrategy } from '../auth/admin-token-strategy.js';
import type { BoundRoutes } from '../route-module.js';
import type { ScopeDeclaration } from './api-scope.js';
import type { ScopeRateLimit } from '../scope-policy.js';

export interface AdminScopeDeps {
  adminToken: string | null;
  /** The operator's calls are paid from project credit. */
  meter: Meter;
  rateLimit: ScopeRateLimit;
}

export function adminScope(deps: AdminScopeDeps, routes: readonly BoundRoutes[]): ScopeDeclaration | null {
  if (!deps.adminToken) return null;
  return {
    prefix: '/admin/v1',
    strategy: new AdminTokenStrategy(deps.adminToken, deps.meter),
    routes,
    policy: {
      rateLimit: { ...deps.rateLimit, exceededMessage: 'Rate limit exceeded: too many requests per minute for the admin token' },
      security: [{ name: 'AdminToken', scheme: { type: 'http', scheme: 'bearer', description: 'The operator token, SLUICE_ADMIN_TOKEN' } }],
    },
  };
}
