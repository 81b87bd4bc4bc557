/** The audit log's entries, its query, and the store the domain needs: append-only, it has no update or delete. */
import type { Page } from '../shared/pagination.js';

/** Who made a change: the admin token, an operator session opened with it, a user, an API key, the CLI on the server's machine, or nobody known (a failed sign-in). */
export type ActorType = 'admin_token' | 'operator_session' | 'user' | 'api_key' | 'cli' | 'anonymous';

export interface Actor {
  type: ActorType;
  /** The user or key id; the CLI's operating-system user name; for a failed sign-in, what was presented to name the person (an email), when anything was; null otherwise. */
  id: string | null;
  /** The client address of the request; `local` for the CLI. */
  ip: string | null;
}

export interface AuditChange {
  /** `<target>.<verb>`, e.g. `key.create`, `member.update`, `sign_in.failure`. */
  action: string;
  targetType: string;
  targetId: string | null;
  /** The project the change belongs to, when it belongs to one. */
  projectId: string | null;
  /** A small record of the change; secrets are never put here (AuditLog drops fields named like one). */
  detail: Readonly<Record<string, unknown>>;
}

export interface AuditEntry extends AuditChange {
  id: string;
  createdAtMs: number;
  actor: Actor;
}

export interface AuditFilter {
  projectId?: string;
  actorId?: string;
  action?: string;
  sinceMs?: number;
  untilMs?: number;
}

export interface AuditStore {
  append(entry: AuditEntry): Promise<void>;
  /** Newest first; `after` is the last id of the previous page. */
  list(filter: AuditFilter, limit: number, after?: string): Promise<Page<AuditEntry>>;
}
