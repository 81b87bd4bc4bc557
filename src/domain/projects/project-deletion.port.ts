/** The store a project's deletion needs (project-deletion.ts): one transaction that removes what the project owns. */

/** What the store removed, counted by kind, and what is left to do after the commit. */
export interface ProjectRemoval {
  /** The revoked keys' secrets (current and, during a rotation's grace, previous): dropped from the lookup cache. */
  keyHashes: string[];
  /** The blobs of the deleted request log bodies. */
  blobKeys: string[];
  removed: ProjectRemovalCounts;
}

export interface ProjectRemovalCounts {
  keysRevoked: number;
  requestLogEntries: number;
  members: number;
  consoleSessions: number;
  responses: number;
  batches: number;
  filesDeleted: number;
}

export interface ProjectDeletionStore {
  /**
   * Everything the project owns removed, in one transaction; `running` (and nothing changed)
   * while any of its batches runs; null when there is no such project (deleted meanwhile).
   */
  remove(projectId: string, nowMs: number): Promise<{ running: number } | ProjectRemoval | null>;
}
