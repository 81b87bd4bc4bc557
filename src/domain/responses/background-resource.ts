/**
 * The objects of a background response beside those its run makes: the one it answers
 * with at once (`queued`: the request's settings, no output, no usage yet), and one that
 * ends without its run's own answer (`failed`, with why). Each says `background: true`.
 */
import type { ResponsesRequestBody } from '../../wire/responses/body.js';
import { headOf, responseResource } from './resource.js';

/** A run's object, as a background response shows it. */
export const asBackground = (resource: Record<string, unknown>): Record<string, unknown> => ({ ...resource, background: true });

export function queuedResource(id: string, body: ResponsesRequestBody, createdAt: number): Record<string, unknown> {
  // `queued` is a status only background responses have; the run's own statuses follow.
  return asBackground({ ...responseResource(headOf(body, id, createdAt), { status: 'in_progress', output: [] }), status: 'queued' });
}

export function failedResource(resource: Record<string, unknown>, error: { code: string; message: string }): Record<string, unknown> {
  return { ...resource, status: 'failed', completed_at: null, error: { message: error.message, type: 'server_error', param: null, code: error.code } };
}
