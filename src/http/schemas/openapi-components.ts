/**
 * The OpenAPI document's named components and error responses: the shared objects a
 * client generator should see once (the error envelope, chat completion and its stream
 * chunk, the response object and its stream events, usage, file, batch), and what each error status of a route means. The document
 * helper (src/http/openapi-document.ts) puts them in place; routes keep their inline
 * schemas, which stay their serializers.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { ErrorKind } from '../../domain/shared/errors.js';
import { ChatCompletionChunk, ChatCompletionObject, ChatUsage } from '../../wire/chat-completions/response.js';
import { BatchObject, FileObject } from './files-batches.js';
import { ResponseObject, ResponseStreamEvent } from '../../wire/responses/response.js';

/** `{error: {message, type, code, param[, line]}}`: every error Sluice answers, one shape. */
export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    message: Type.String({ description: 'what went wrong, and for a configuration state what fixes it' }),
    type: Type.String({ description: 'invalid_request_error, authentication_error, rate_limit_exceeded, insufficient_quota or internal_error' }),
    code: Type.Union([Type.String(), Type.Null()], { description: 'machine-readable reason, e.g. model_not_found, invalid_json, model_not_available' }),
    param: Type.Union([Type.String(), Type.Null()], { description: 'the request field at fault, when one is' }),
    line: Type.Optional(Type.Integer({ description: '1-based line of a batch input file' })),
  }),
});

/** Name in `components.schemas` → schema. Inline copies of these in the document become `$ref`s. */
export const NAMED_COMPONENTS: ReadonlyMap<string, TSchema> = new Map<string, TSchema>([
  ['Error', ErrorEnvelope],
  ['ChatCompletion', ChatCompletionObject],
  ['ChatCompletionChunk', ChatCompletionChunk],
  ['Response', ResponseObject],
  ['ResponseStreamEvent', ResponseStreamEvent],
  ['Usage', ChatUsage],
  ['File', FileObject],
  ['Batch', BatchObject],
]);

/** What a status means, per error kind that answers it. */
const KIND_DESCRIPTIONS: Readonly<Record<ErrorKind, string>> = {
  invalid_request: 'the request is invalid (malformed JSON, a field out of range, an unknown model); `param` names the field',
  context_length: 'the input is over the model’s token limit (`context_length_exceeded`)',
  authentication: 'no credentials, or credentials of the wrong form',
  payment_required: 'payment required',
  permission: 'the credentials are not valid (unknown, revoked, or not in the named project)',
  not_found: 'no such object (another project’s objects are not found either)',
  conflict: 'the object is in a state that does not allow it',
  payload_too_large: 'the request body is over its limit',
  unprocessable: 'the request is well-formed but cannot be processed',
  insufficient_quota: 'not enough credit for this call’s worst-case cost',
  rate_limit: 'too many requests or tokens per minute for this key (see `retry-after`), or the key’s budget is spent for its window (`budget_exceeded`, `x-sluice-budget-reset`)',
  upstream: 'the model’s upstream failed, timed out or answered unexpectedly',
  unavailable: 'the model is not installed or not configured; the message names the fix (`x-should-retry: false`)',
  internal: 'an internal error (the server log has the details)',
};

/** Error kinds by the route's tag, besides those every route, body and parameter brings. */
export const KINDS_BY_TAG: ReadonlyMap<string, readonly ErrorKind[]> = new Map<string, readonly ErrorKind[]>([
  // An upstream's 404, 409, 413 and 422 are passed through with their status.
  ['inference', ['insufficient_quota', 'upstream', 'unavailable', 'not_found', 'conflict', 'unprocessable']],
  ['audio', ['insufficient_quota', 'unavailable']],
  ['decision', ['insufficient_quota', 'upstream', 'unavailable', 'not_found', 'unprocessable']],
  // The admin token: 401 when missing, 403 when wrong.
  ['admin', ['authentication', 'permission']],
]);

export const describeKinds = (kinds: readonly ErrorKind[]): string =>
  kinds.map((k) => KIND_DESCRIPTIONS[k]).join('; or ');
