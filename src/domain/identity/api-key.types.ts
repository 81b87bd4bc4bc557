/** An API key as stored (its hash, never the key) and the store the domain needs for keys. */
import type { KeyPolicy } from './key-policy.types.js';

export interface ApiKeyRecord {
  id: string;
  projectId: string;
  name: string;
  prefix: string;
  keyHash: string;
  createdAtMs: number;
  revokedAtMs: number | null;
  /** What the key may do beyond authenticating; null when it sets nothing. */
  policy: KeyPolicy | null;
  /** The secret a rotation replaced, still accepted until previousValidUntilMs; null when none is. */
  previousKeyHash: string | null;
  previousValidUntilMs: number | null;
  /** The user who made the key (a member manages only their own); null or absent: an operator, the admin token or the CLI made it. */
  ownerUserId?: string | null;
}

/** A rotation: the new secret's hash and prefix, and until when the replaced one stays valid (null: not at all). */
export interface KeyRotation {
  keyHash: string;
  prefix: string;
  previousValidUntilMs: number | null;
}

export interface ApiKeyStore {
  insert(key: ApiKeyRecord): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  /** The project's keys, newest first; only those `ownerUserId` owns when it is given. */
  listByProject(projectId: string, ownerUserId?: string): Promise<ApiKeyRecord[]>;
  revoke(id: string, nowMs: number): Promise<ApiKeyRecord | undefined>;
  /** Replaces the key's name and policy; returns the record after (undefined: no such key). */
  update(id: string, changes: { name: string; policy: KeyPolicy | null }): Promise<ApiKeyRecord | undefined>;
  /** Gives an active key a new secret; returns the record after (undefined: no such active key). */
  rotate(id: string, rotation: KeyRotation): Promise<ApiKeyRecord | undefined>;
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
