/** Console users, their roles in projects, and the store the domain needs for them. */
import type { Page } from '../shared/pagination.js';

/** A user's role in a project, least to most (roles.ts says what each may do). */
export type ProjectRole = 'viewer' | 'member' | 'admin' | 'owner';

export interface User {
  id: string;
  email: string;
  name: string | null;
  /** An operator may do what the admin token's session may: every project, every admin route. */
  operator: boolean;
  /** Set for a user provisioned by an OIDC sign-in: the issuer and the subject it names them by. */
  oidc: { issuer: string; subject: string } | null;
  createdAtMs: number;
}

export interface Membership {
  projectId: string;
  userId: string;
  role: ProjectRole;
  createdAtMs: number;
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
  updateUser(id: string, change: { name?: string | null; operator?: boolean; oidc?: User['oidc'] }): Promise<User | undefined>;
  /** Deletes the user, their memberships and their sessions; false when there was no such user. */
  deleteUser(id: string): Promise<boolean>;
  /** Sets the user's role in the project (adding the membership when absent). */
  putMembership(membership: Membership): Promise<Membership>;
  findMembership(projectId: string, userId: string): Promise<Membership | undefined>;
  listMembers(projectId: string): Promise<Membership[]>;
  projectsOf(userId: string): Promise<UserProject[]>;
  /** False when there was no such membership. */
  deleteMembership(projectId: string, userId: string): Promise<boolean>;
}
