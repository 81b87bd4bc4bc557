/**
 * What an admin route needs of a user who is not an operator: a route that serves one
 * project declares which (`projectOf`) and the permission it needs there (roles.ts). The
 * console's session strategy admits such a user only with a role that holds it; a route
 * that declares nothing is for operators only. A route may also let the user who owns its
 * object (a member's own key) act with a lesser permission (`owned`). The admin token and
 * operators pass as before.
 */
import type { FastifyRequest } from 'fastify';
import type { ProjectPermission } from '../../domain/people/roles.js';

export interface ProjectAccess {
  need: ProjectPermission;
  /** The project the request acts in; undefined when it names none (then only an operator may make it). Throws 404 for an object that does not exist. */
  projectOf(request: FastifyRequest): string | undefined | Promise<string | undefined>;
  /** The user who owns the route's object needs only `need` here (e.g. `use` to revoke their own key); `ownerOf` names that user (null: no user owns it). */
  owned?: { need: ProjectPermission; ownerOf(request: FastifyRequest): Promise<string | null> };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    projectAccess?: ProjectAccess;
  }
}

/** The route's project is its `:id` path parameter. */
export const projectInPath = (need: ProjectPermission): { config: { projectAccess: ProjectAccess } } => ({
  config: { projectAccess: { need, projectOf: (request) => (request.params as { id?: string }).id } },
});

/** The route's project is its `project_id` query parameter (absent: every project, operators only). */
export const projectInQuery = (need: ProjectPermission): { config: { projectAccess: ProjectAccess } } => ({
  config: { projectAccess: { need, projectOf: (request) => (request.query as { project_id?: string }).project_id } },
});
