/**
 * Anthropic's error envelope, `{type: "error", error: {type, message}, request_id}`, and
 * its stream error frame (`event: error`), for every error of the Messages routes: body
 * validation, auth, rate limits, the meter and the engine. The `type` follows the status
 * the error is answered with, as Anthropic's table has it (400 invalid_request_error,
 * 401 authentication_error, 402 billing_error, 403 permission_error, 404 not_found_error,
 * 413 request_too_large, 429 rate_limit_error, 500 api_error, 504 timeout_error, 529
 * overloaded_error; another 4xx is invalid_request_error, another 5xx api_error).
 *
 * Statuses this wire answers differently from the house: a wrong API key is 401
 * authentication_error, as Anthropic answers it (the house says 403); a balance too low is a 400 with
 * Anthropic's low-balance wording, as Anthropic answers it; an unknown model is 404
 * not_found_error; an engine that is overloaded, rate limited or unreachable (a retryable
 * upstream fault) is 529 overloaded_error, which Anthropic's clients retry, one that timed
 * out 504 timeout_error; any other engine fault is 500 api_error. An input over the
 * model's context window says `prompt is too long: N tokens > M maximum`.
 */
import { Type } from '@sinclair/typebox';
import { ContextLengthError } from '../../domain/completions/chat-runner.js';
import type { AppError } from '../../domain/shared/errors.js';
import type { ErrorAnswer, WireErrorFormat } from '../error-format.js';
import { exposedMessage } from '../openai-errors.js';

const TYPE_OF_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [402, 'billing_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [429, 'rate_limit_error'],
  [500, 'api_error'],
  [504, 'timeout_error'],
  [529, 'overloaded_error'],
]);

/** Anthropic's error `type` of an HTTP status. */
export const anthropicErrorType = (status: number): string => TYPE_OF_STATUS.get(status) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

export const LOW_BALANCE_MESSAGE = 'Your credit balance is too low to access this API. Please add credit to your account, then try again.';

export const OVERLOADED_STATUS = 529;

function messageOf(error: AppError): string {
  if (error instanceof ContextLengthError) return `prompt is too long: ${error.tokens} tokens > ${error.limit} maximum`;
  if (error.kind === 'insufficient_quota') return LOW_BALANCE_MESSAGE;
  return exposedMessage(error);
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string | null;
}

export function anthropicErrorBody(error: AppError, answer: Pick<ErrorAnswer, 'status' | 'requestId'>): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(answer.status), message: messageOf(error) }, request_id: answer.requestId || null };
}

/** The status of `error` on this wire, given the one the house (and the scope) would answer with. */
function statusOn(error: AppError, status: number): number {
  // Anthropic answers a wrong key 401 authentication_error (the house's /v1 answers 403).
  if (error.code === 'invalid_api_key') return 401;
  if (error.kind === 'insufficient_quota') return 400;
  if (error.code === 'model_not_found') return 404;
  if (error.code === 'upstream_timeout') return 504;
  // An engine's own rate limit is its capacity, not the caller's: overloaded.
  if (error.kind === 'rate_limit' && error.upstreamStatus !== undefined) return OVERLOADED_STATUS;
  if (error.kind === 'upstream') return error.retryable ? OVERLOADED_STATUS : 500;
  return status;
}

/** The envelope, for the OpenAPI document. */
const AnthropicErrorEnvelope = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({
      type: Type.String({ description: 'invalid_request_error, authentication_error, billing_error, permission_error, not_found_error, request_too_large, rate_limit_error, api_error, timeout_error, overloaded_error' }),
      message: Type.String(),
    }),
    request_id: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'AnthropicError' },
);

export const ANTHROPIC_ERRORS: WireErrorFormat = {
  envelope: (error, answer) => anthropicErrorBody(error, answer),
  streamFrame: (error, answer) => `event: error\ndata: ${JSON.stringify(anthropicErrorBody(error, answer))}\n\n`,
  status: statusOn,
  schema: AnthropicErrorEnvelope,
};
