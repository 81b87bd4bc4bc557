/**
 * Project roles and what each may do. Viewers read (usage, logs, the project); members
 * also use the project (make keys, the playgrounds, any /v1 call); admins also manage it
 * (keys, policies, members, its audit log); owners also manage its billing (credit).
 */
import { invalidRequest } from '../shared/errors.js';
import type { ProjectRole } from './people.types.js';

export type { ProjectRole };

export const PROJECT_ROLES: readonly ProjectRole[] = ['viewer', 'member', 'admin', 'owner'];

export type ProjectPermission = 'read' | 'use' | 'manage' | 'billing';

/** The least role that holds each permission. */
const LEAST_ROLE: Readonly<Record<ProjectPermission, ProjectRole>> = { read: 'viewer', use: 'member', manage: 'admin', billing: 'owner' };

const rank = (role: ProjectRole): number => PROJECT_ROLES.indexOf(role);

export const leastRoleFor = (permission: ProjectPermission): ProjectRole => LEAST_ROLE[permission];

export const roleAllows = (role: ProjectRole, permission: ProjectPermission): boolean => rank(role) >= rank(LEAST_ROLE[permission]);

export const isProjectRole = (value: unknown): value is ProjectRole => typeof value === 'string' && (PROJECT_ROLES as readonly string[]).includes(value);

/** `value` as a role, or 400 naming `field` and the roles there are. */
export function readProjectRole(value: unknown, field: string): ProjectRole {
  if (isProjectRole(value)) return value;
  throw invalidRequest(`${field} must be one of ${PROJECT_ROLES.join(', ')}, got ${JSON.stringify(value)}`, field, 'invalid_role');
}
