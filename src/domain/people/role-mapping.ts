/** A signed-in person's claims, through the configured rules, to the operator flag and project roles (the highest role per project wins). */
import type { ProjectRole } from './people.types.js';
import type { ClaimMatch, RoleMapping } from './role-mapping.types.js';
import { PROJECT_ROLES } from './roles.js';

export interface Grants {
  operator: boolean;
  roles: Map<string, ProjectRole>;
}

function matches(claims: Readonly<Record<string, unknown>>, { claim, value }: ClaimMatch): boolean {
  const held = claims[claim];
  if (Array.isArray(held)) return held.some((v) => v === value);
  return held === value || (typeof held === 'boolean' && String(held) === value);
}

export function grantsOf(claims: Readonly<Record<string, unknown>>, mapping: RoleMapping): Grants {
  const roles = new Map<string, ProjectRole>();
  const give = (project: string, role: ProjectRole) => {
    const held = roles.get(project);
    if (held === undefined || PROJECT_ROLES.indexOf(role) > PROJECT_ROLES.indexOf(held)) roles.set(project, role);
  };
  for (const rule of mapping.roles) if (matches(claims, rule)) give(rule.project, rule.role);
  const operator = mapping.operators.some((rule) => matches(claims, rule));
  if (roles.size === 0 && !operator && mapping.defaultRole) give(mapping.defaultRole.project, mapping.defaultRole.role);
  return { operator, roles };
}

/** No rule gave the person anything: they are refused. */
export const grantsNothing = (grants: Grants): boolean => !grants.operator && grants.roles.size === 0;
