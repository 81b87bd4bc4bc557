/** The refusals of stored responses, in OpenAI's words where OpenAI has them. */
import type { AppError} from '../shared/errors.js';
import { invalidRequest, notFound } from '../shared/errors.js';

export const responseNotFound = (id: string): AppError => notFound(`Response with id '${id}' not found.`);

export const previousResponseNotFound = (id: string): AppError =>
  notFound(`Previous response with id '${id}' not found.`, 'previous_response_not_found', 'previous_response_id');

export const previousResponseRunning = (id: string, status: string): AppError =>
  invalidRequest(
    `Previous response with id '${id}' has not finished (its status is ${status}); continue from it once it has.`,
    'previous_response_id',
    'previous_response_in_progress',
  );

export const backgroundNeedsStore = (): AppError => invalidRequest('background can only be used when `store` is true', 'background');

export const backgroundNotStreamed = (): AppError =>
  invalidRequest(
    'background cannot be used with stream=true; create the response, then stream it with GET /v1/responses/{id}?stream=true',
    'stream',
  );

export const backgroundNotForCaller = (kind: string): AppError =>
  invalidRequest(`background is not available to callers paying as "${kind}"`, 'background');

export const cannotCancelSynchronous = (): AppError => invalidRequest('Cannot cancel a synchronous response.');

export const cannotCancelEnded = (status: string): AppError => invalidRequest(`Cannot cancel a response that is already ${status}.`);

export const cannotDeleteRunning = (): AppError => invalidRequest('Cannot delete a background response while it runs; cancel it first.');

export const onlyBackgroundStreams = (): AppError =>
  invalidRequest('Only background responses can be streamed after they were created (this one was not created with background: true).', 'stream');
