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
