/**
 * Deleting a project. Refused (409 `project_has_running_batches`) while any of its batches
 * runs, and (409 `project_in_use`) for a project the configuration names; otherwise, in one transaction of the store: its keys are revoked (every replica
 * drops them), its request log entries, their bodies and its logging settings deleted,
 * its members, console sessions, stored responses and batches (with their lines' results)
 * deleted, its files marked deleted (the janitor purges their blobs, as for any deleted
 * file), and the project itself kept as a tombstone that no lookup finds. Its usage
 * records and credit grants stay, for accounting, and so does the audit log.
 *
 * The log bodies' blobs are deleted after the commit; one that cannot be is reported
 * (`blobsLeft`) to the operator and in the deletion's audit entry, and nothing reads it again.
 */
import { AppError } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import type { Project } from './project.types.js';
import type { AuditRecorder } from '../audit/audit-log.js';
import type { Actor } from '../audit/audit.types.js';
import type { ProjectDeletionStore, ProjectRemovalCounts } from './project-deletion.port.js';

export type { ProjectDeletionStore, ProjectRemoval, ProjectRemovalCounts } from './project-deletion.port.js';

export interface ProjectDeleted {
  project: Project;
  removed: ProjectRemovalCounts;
  /** Log body blobs that could not be deleted (the blob store failed); nothing refers to them any more. */
  blobsLeft: string[];
}

export interface ProjectDeletionDeps {
  store: ProjectDeletionStore;
  /** The project as found (404 when it is not, or is deleted already). */
  getProject(projectId: string): Promise<Project>;
  /** Drops this replica's cached lookup of a key's secret (other replicas hear it from the store's commit). */
  forgetKey(keyHash: string): void;
  /** Writes the request log entries queued on this replica, so none of the project's is written after its deletion. */
  flushLog(): Promise<void>;
  blobs: { delete(key: string): Promise<void> };
  clock: Clock;
  audit: AuditRecorder;
  /** What the configuration uses the project for (the gateway's tenant, a seller's project); null when nothing. */
  configuredUse(projectId: string): string | null;
  /** A blob that could not be deleted. */
  blobFailed(key: string, err: unknown): void;
}

export const runningBatches = (projectId: string, running: number) =>
  new AppError('conflict', `Project ${projectId} has ${running} running batch${running === 1 ? '' : 'es'}: cancel ${running === 1 ? 'it' : 'them'} (or wait for ${running === 1 ? 'it' : 'them'} to end) before deleting the project`, {
    code: 'project_has_running_batches',
  });

export const projectInUse = (projectId: string, use: string) =>
  new AppError('conflict', `Project ${projectId} is ${use}, named by the configuration: take it out of the configuration before deleting the project`, {
    code: 'project_in_use',
  });

export class ProjectDeletion {
  constructor(private readonly deps: ProjectDeletionDeps) {}

  /** Deletes the project and audits it as `actor`'s change, with what was removed and any blob left. */
  async delete(projectId: string, actor: Actor): Promise<ProjectDeleted> {
    const project = await this.deps.getProject(projectId);
    const use = this.deps.configuredUse(project.id);
    if (use !== null) throw projectInUse(project.id, use);
    await this.deps.flushLog();
    const outcome = await this.deps.store.remove(project.id, this.deps.clock.nowMs());
    // Deleted meanwhile (another replica's deletion won): as absent as a project that never was.
    if (outcome === null) throw new AppError('not_found', `Project not found: ${projectId}`, { code: 'project_not_found' });
    if ('running' in outcome) throw runningBatches(project.id, outcome.running);
    for (const hash of outcome.keyHashes) this.deps.forgetKey(hash);
    const blobsLeft: string[] = [];
    for (const key of outcome.blobKeys) {
      try {
        await this.deps.blobs.delete(key);
      } catch (err) {
        blobsLeft.push(key);
        this.deps.blobFailed(key, err);
      }
    }
    const detail = { name: project.name, removed: { ...outcome.removed }, blobsLeft };
    await this.deps.audit.record(actor, { action: 'project.delete', targetType: 'project', targetId: project.id, projectId: project.id, detail });
    return { project, removed: outcome.removed, blobsLeft };
  }
}
