/** How an identity provider's claims map to Sluice roles (configured in `sign_in.oidc`). */
import type { ProjectRole } from './people.types.js';

/** Matches when the claim is `value`, or is a list (e.g. `groups`) holding it. */
export interface ClaimMatch {
  claim: string;
  value: string;
}

export interface RoleRule extends ClaimMatch {
  project: string;
  role: ProjectRole;
}

export interface RoleMapping {
  /** A user matching any of these is an operator. */
  operators: readonly ClaimMatch[];
  roles: readonly RoleRule[];
  /** The role of a user no rule maps; null: such a user is refused. */
  defaultRole: { project: string; role: ProjectRole } | null;
}
