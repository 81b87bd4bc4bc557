/** Console users, their roles in projects, and the store the domain needs for them. */
import type { Page } from '../shared/pagination.js';

/** A user's role in a project, least to most (roles.ts says what each may do). */
export type ProjectRole = 'viewer' | 'member' | 'admin' | 'owner';

export interface User {
  id: string;
  email: string;
  name: string | null;
  /**
   * An operator may do what the admin token's session may: every project, every admin route.
   * Set by hand (`operatorByHand`) or by the last OIDC sign-in's claims.
   */
  operator: boolean;
  /** The operator flag the admin API sets; the claims cannot take it away. */
  operatorByHand: boolean;
  /** Set for a user provisioned by an OIDC sign-in: the issuer and the subject it names them by. */
  oidc: { issuer: string; subject: string } | null;
  createdAtMs: number;
}

/** Who gave a membership: by hand (the admin API, the console), or the sign-in's role rules, which take it back when the claims stop giving it. */
export type GrantedBy = 'admin' | 'mapping';

export interface Membership {
  projectId: string;
  userId: string;
  role: ProjectRole;
  createdAtMs: number;
  grantedBy: GrantedBy;
}

/** A membership with the project's name, for a user's list of projects. */
export interface UserProject {
  projectId: string;
  projectName: string;
  role: ProjectRole;
}

export interface PeopleStore {
  /** Undefined when the email is taken. */
  insertUser(user: User): Promise<User | undefined>;
  findUser(id: string): Promise<User | undefined>;
  findByOidc(issuer: string, subject: string): Promise<User | undefined>;
  findByEmail(email: string): Promise<User | undefined>;
  /** Newest first; undefined when `after` names no user. */
  listUsers(limit: number, after?: string): Promise<Page<User> | undefined>;
  /** `operator`: the flag set by hand; `operatorMapped`: the one the claims give. */
  updateUser(id: string, change: { name?: string | null; operator?: boolean; operatorMapped?: boolean; oidc?: User['oidc'] }): Promise<User | undefined>;
  /** Deletes the user, their memberships and their sessions; false when there was no such user. */
  deleteUser(id: string): Promise<boolean>;
  /** Sets the user's role in the project (adding the membership when absent). */
  putMembership(membership: Membership): Promise<Membership>;
  findMembership(projectId: string, userId: string): Promise<Membership | undefined>;
  listMembers(projectId: string): Promise<Membership[]>;
  /** Every project the user is a member of. */
  membershipsOf(userId: string): Promise<Membership[]>;
  projectsOf(userId: string): Promise<UserProject[]>;
  /** False when there was no such membership. */
  deleteMembership(projectId: string, userId: string): Promise<boolean>;
}
