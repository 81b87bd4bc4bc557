/** A project (tenant) and the store the domain needs for projects. */
import type { Page } from '../shared/pagination.js';
import type { UsageRecord } from '../billing/usage.types.js';

export interface Project {
  id: string;
  name: string;
  balanceMicros: number;
  createdAtMs: number;
}

export interface ProjectStore {
  insert(project: Project): Promise<Project>;
  /** Inserts unless a project with its id exists; the stored project either way. */
  insertIfAbsent(project: Project): Promise<Project>;
  findById(id: string): Promise<Project | undefined>;
  /**
   * Newest first (creation time, then id); `after` is the last project of the previous
   * page. Undefined when `after` names no project.
   */
  listPage(limit: number, after?: string): Promise<Page<Project> | undefined>;
  /** Adds `deltaMicros` (may be negative) and returns the project with its new balance. */
  adjustBalance(id: string, deltaMicros: number): Promise<Project | undefined>;
}

export interface UsageHistory {
  /** Newest first, after the record `after` when given. */
  listByProject(projectId: string, limit: number, after?: string): Promise<Page<UsageRecord>>;
}

/** A change of a project's credit by an operator (positive or negative), and why. */
export interface CreditGrant {
  id: string;
  projectId: string;
  amountMicros: number;
  reason: string | null;
  createdAtMs: number;
}

export interface CreditGrantStore {
  /** Records the grant and applies it to the balance in one transaction; undefined when the project does not exist. */
  grant(grant: CreditGrant): Promise<Project | undefined>;
  /** Newest first, at most `limit`. */
  listByProject(projectId: string, limit: number): Promise<CreditGrant[]>;
}
