/**
 * The objects of a background response beside those its run makes: the one it answers
 * with at once (`queued`: the request's settings, no output, no usage yet), and one that
 * ends without its run's own answer (`failed`, with why). Each says `background: true`.
 */
import { headOf, responseResource } from './resource.js';
import type { ResponsesRequest } from '../../domain/responses/responses.types.js';

/** A run's object, as a background response shows it. */
export const asBackground = (resource: Record<string, unknown>): Record<string, unknown> => ({ ...resource, background: true });

export function queuedResource(request: ResponsesRequest, id: string, createdAt: number): Record<string, unknown> {
  // `queued` is a status only background responses have; the run's own statuses follow.
  return asBackground({ ...responseResource(headOf(request, id, createdAt), { status: 'in_progress', output: [] }), status: 'queued' });
}

export function failedResource(resource: Record<string, unknown>, error: { code: string; message: string }): Record<string, unknown> {
  return { ...resource, status: 'failed', completed_at: null, error: { message: error.message, type: 'server_error', param: null, code: error.code } };
}
