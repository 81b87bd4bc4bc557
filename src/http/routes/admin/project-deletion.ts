/**
 * `DELETE /admin/v1/projects/:id`: deletes a project and what it owns (domain/projects/
 * project-deletion.ts), for operators only; 409 `project_has_running_batches` while a batch
 * of it runs. The answer says what was removed (and any log body blob the store could not
 * delete); the service audits it.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ProjectDeleted, ProjectDeletion } from '../../../domain/projects/project-deletion.js';
import { actorOf } from '../../auth/actor.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { IdParams } from '../../schemas/admin.js';

const Count = Type.Integer({ minimum: 0 });

export const ProjectDeletedObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('project.deleted'),
  deleted: Type.Literal(true),
  removed: Type.Object({
    keys_revoked: Count,
    request_log_entries: Count,
    members: Count,
    console_sessions: Count,
    responses: Count,
    batches: Count,
    files_deleted: Count,
  }),
  blobs_left: Type.Array(Type.String(), { description: 'request log body blobs the blob store failed to delete (nothing refers to them any more)' }),
});

export function projectDeletedToWire({ project, removed, blobsLeft }: ProjectDeleted) {
  return {
    id: project.id,
    object: 'project.deleted' as const,
    deleted: true as const,
    removed: {
      keys_revoked: removed.keysRevoked,
      request_log_entries: removed.requestLogEntries,
      members: removed.members,
      console_sessions: removed.consoleSessions,
      responses: removed.responses,
      batches: removed.batches,
      files_deleted: removed.filesDeleted,
    },
    blobs_left: blobsLeft,
  };
}

export function registerProjectDeletion(plain: FastifyInstance, { deletion }: { deletion: ProjectDeletion }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const summary = 'Delete a project: its keys revoked, its request log, members, stored responses, batches and files deleted; its usage records kept';
  scope.delete('/projects/:id', { schema: { tags: ['admin'], summary, params: IdParams, response: { 200: ProjectDeletedObject } }, ...serializeAsBefore }, async (request) => {
    return projectDeletedToWire(await deletion.delete(request.params.id, actorOf(request)));
  });
}
