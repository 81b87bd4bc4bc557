/** An API key as stored (its hash, never the key) and the store the domain needs for keys. */
export interface ApiKeyRecord {
  id: string;
  projectId: string;
  name: string;
  prefix: string;
  keyHash: string;
  createdAtMs: number;
  revokedAtMs: number | null;
}

export interface ApiKeyStore {
  insert(key: ApiKeyRecord): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  listByProject(projectId: string): Promise<ApiKeyRecord[]>;
  revoke(id: string, nowMs: number): Promise<ApiKeyRecord | undefined>;
}

/**
 * Revocations announced by other processes on the same database (PostgreSQL
 * LISTEN/NOTIFY), so a replica drops a revoked key's cached lookup at once.
 */
export interface KeyRevocationFeed {
  /**
   * Starts listening: `revoked(keyHash)` for each revocation; `live(true)` once listening
   * (again), `live(false)` when the connection is lost (revocations may be missed until
   * it is back).
   */
  start(handlers: { revoked(keyHash: string): void; live(listening: boolean): void }): void;
  close(): Promise<void>;
}
