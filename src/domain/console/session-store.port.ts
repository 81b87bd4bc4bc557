/** Where console sessions are kept: the sessions service stores each by the hash of its id. */

/** `operator`: the admin token's; `developer`: an API key's; `user`: a user's, whose roles are read on every request. */
export type ConsoleRole = 'operator' | 'developer' | 'user';

export interface ConsoleSession {
  role: ConsoleRole;
  /** The developer's project; null for an operator, who sees every project. */
  projectId: string | null;
  /** The API key a developer signed in with; null for an operator. */
  keyId: string | null;
  /** The user of a `user` session; null otherwise. */
  userId: string | null;
  expiresAtMs: number;
}

export interface SessionStore {
  insert(idHash: string, session: ConsoleSession, createdAtMs: number): Promise<void>;
  /** The session if unexpired at `nowMs` and, for a developer, its key is not revoked. */
  findLive(idHash: string, nowMs: number): Promise<ConsoleSession | undefined>;
  delete(idHash: string): Promise<void>;
  deleteExpired(nowMs: number): Promise<void>;
}
