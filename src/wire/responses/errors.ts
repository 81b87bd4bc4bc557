/**
 * The Responses wire's errors. Its own format is OpenAI's envelope and stream error frame,
 * under the wire's name (RESPONSES_ERRORS), so a scope can answer this wire's errors its own
 * way without naming a URL: the gateway's variant (failedResponseErrors) answers a client
 * error as a Responses object with `status: "failed"` and `error` populated (spec, Responses
 * object; the intermediary's clients read every answer of this route as a Responses
 * object), echoing the request's fields where its body was readable. A server fault, and a
 * stream cut after it started, stay in OpenAI's shape.
 */
import { randomBytes } from 'node:crypto';
import type { WireErrorFormat } from '../error-format.js';
import { OPENAI_ERRORS, openAIErrorEnvelope, type OpenAIErrorEnvelope } from '../openai-errors.js';

export const RESPONSES_ERRORS: WireErrorFormat = { envelope: OPENAI_ERRORS.envelope, streamFrame: OPENAI_ERRORS.streamFrame };

/** The Responses wire's errors with a client error answered as a failed Responses object created at `nowSeconds()`. */
export function failedResponseErrors(nowSeconds: () => number): WireErrorFormat {
  return {
    envelope: (error, answer) =>
      answer.status < 500 ? failedResponseObject(answer.requestBody, openAIErrorEnvelope(error), nowSeconds()) : RESPONSES_ERRORS.envelope(error, answer),
    streamFrame: RESPONSES_ERRORS.streamFrame,
  };
}

const pick = <T>(value: unknown, guard: (v: unknown) => v is T, fallback: T | null): T | null => (guard(value) ? value : fallback);
const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

function failedResponseObject(requestBody: unknown, envelope: OpenAIErrorEnvelope, nowSeconds: number): Record<string, unknown> {
  const body = (typeof requestBody === 'object' && requestBody !== null ? requestBody : {}) as Record<string, unknown>;
  const { message, type, param, code } = envelope.error;
  return {
    id: `resp_${randomBytes(24).toString('hex')}`,
    object: 'response',
    created_at: nowSeconds,
    status: 'failed',
    completed_at: null,
    error: { message, type, param, code },
    incomplete_details: null,
    instructions: pick(body.instructions, isString, null),
    max_output_tokens: pick(body.max_output_tokens, isNumber, null),
    model: pick(body.model, isString, null),
    output: [],
    parallel_tool_calls: pick(body.parallel_tool_calls, isBoolean, true),
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: pick(body.store, isBoolean, true),
    temperature: pick(body.temperature, isNumber, null),
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: pick(body.top_p, isNumber, null),
    truncation: body.truncation === 'auto' ? 'auto' : 'disabled',
    usage: null,
    user: pick(body.user, isString, null),
    metadata: pick(body.metadata, isStringMap, {}),
    // Open Responses' other ResponseResource fields, as /v1/responses answers them.
    background: false,
    conversation: null,
    frequency_penalty: pick(body.frequency_penalty, isNumber, 0),
    presence_penalty: pick(body.presence_penalty, isNumber, 0),
    top_logprobs: pick(body.top_logprobs, isNumber, 0),
    max_tool_calls: pick(body.max_tool_calls, isNumber, null),
    service_tier: pick(body.service_tier, isString, 'default'),
    safety_identifier: pick(body.safety_identifier, isString, null),
    prompt_cache_key: pick(body.prompt_cache_key, isString, null),
  };
}
