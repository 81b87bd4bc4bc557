/**
 * A route module registers its routes on whatever scope mounts it, from the narrow
 * services it names (`RouteModule<{ chat: ChatCompletionsService }>`); it never knows the
 * scope's strategy or policy. A feature binds each module to its services once
 * (`bindRoutes`), and the bound module can then be mounted under several scopes (`/v1`, the
 * gateway, the console).
 */
import type { FastifyInstance } from 'fastify';

export type RouteModule<Deps> = (scope: FastifyInstance, deps: Deps) => void | Promise<void>;

/** A route module bound to its services: what a scope declaration mounts. */
export type BoundRoutes = (scope: FastifyInstance) => void | Promise<void>;

export const bindRoutes =
  <Deps>(module: RouteModule<Deps>, deps: Deps): BoundRoutes =>
  (scope) =>
    module(scope, deps);
