/**
 * A route module that is mounted by one part of the composition and bound by another that
 * is built later: the core's /v1 scope (and the gateway) mount POST /v1/responses, which
 * the responses feature binds to its stored-responses service. Scopes are mounted after
 * every feature is assembled, so the binding is always in place by then.
 */
import type { BoundRoutes } from '../http/route-module.js';

export interface LateRoutes {
  /** What scopes mount: the bound module, once bound. */
  readonly routes: BoundRoutes;
  bind(routes: BoundRoutes): void;
}

export function lateRoutes(name: string): LateRoutes {
  let bound: BoundRoutes | null = null;
  return {
    routes: (scope) => {
      if (!bound) throw new Error(`the ${name} routes were mounted before a feature bound them`);
      return bound(scope);
    },
    bind(routes) {
      if (bound) throw new Error(`the ${name} routes are bound twice`);
      bound = routes;
    },
  };
}
