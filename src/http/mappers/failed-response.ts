/**
 * The gateway's Responses errors: a Responses object with `status: "failed"` and `error`
 * populated (spec, Responses object; the intermediary's clients read every answer of this
 * route as a Responses object). Request fields are echoed where the body was readable.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ErrorEnvelope } from '../errors.js';

const pick = <T>(value: unknown, guard: (v: unknown) => v is T, fallback: T | null): T | null => (guard(value) ? value : fallback);
const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

export function failedResponseObject(request: FastifyRequest, envelope: ErrorEnvelope, nowSeconds: number): Record<string, unknown> {
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
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
