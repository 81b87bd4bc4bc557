/**
 * A Responses request body → a validated ResponsesRequest. `input` is a string or a list
 * of messages; `instructions` becomes a leading system message (and, for zero-shot
 * models, holds the candidate labels). Unsupported features are refused by name.
 */
import { invalidRequest } from '../shared/errors.js';
import type { ChatMessage } from '../models/inference-backend.port.js';
import { readMessage, readSampling } from './chat-request.js';
import {
  type Body,
  optionalBoolean,
  optionalInteger,
  optionalLabels,
  optionalNumber,
  optionalObject,
  optionalString,
  requireObject,
  requiredString,
} from './request-fields.js';

export interface ResponsesRequest {
  model: string;
  messages: ChatMessage[];
  instructions: string | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  truncation: 'auto' | 'disabled';
  store: boolean;
  parallelToolCalls: boolean;
  reasoningEffort: string | null;
  user: string | null;
  metadata: Record<string, unknown>;
  sampling: Record<string, unknown>;
  labels: string[] | null;
}

function readInput(body: Body): ChatMessage[] {
  const input = body.input;
  if (input === undefined || input === null) throw invalidRequest('input is required', 'input');
  if (typeof input === 'string') {
    if (input === '') throw invalidRequest('input must be a non-empty string or a list of messages', 'input');
    return [{ role: 'user', content: input }];
  }
  if (!Array.isArray(input) || input.length === 0) throw invalidRequest('input must be a non-empty string or a list of messages', 'input');
  return input.map((item: unknown, i) => {
    const type = (item as Body | null)?.type;
    if (type !== undefined && type !== 'message') {
      throw invalidRequest(`input[${i}].type must be "message"; only message items are supported`, `input[${i}].type`);
    }
    return readMessage(item, `input[${i}]`);
  });
}

function readTextFormat(body: Body): void {
  const text = optionalObject(body, 'text');
  const format = text ? optionalObject(text, 'format', 'text.format') : undefined;
  const type = format ? optionalString(format, 'type', 'text.format.type') : undefined;
  if (type !== undefined && type !== 'text') {
    throw invalidRequest(`text.format.type "${type}" is not supported; only "text" is`, 'text.format.type');
  }
}

function refuseUnsupported(body: Body): void {
  if (body.stream === true) throw invalidRequest('stream is not supported on /v1/responses; use /v1/chat/completions to stream', 'stream');
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw invalidRequest('previous_response_id is not supported: responses are not stored; send the whole conversation as input', 'previous_response_id');
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) throw invalidRequest('tools are not supported', 'tools');
}

export function parseResponsesRequest(raw: unknown): ResponsesRequest {
  const body = requireObject(raw);
  const model = requiredString(body, 'model');
  const inputMessages = readInput(body);
  refuseUnsupported(body);
  readTextFormat(body);
  const instructions = optionalString(body, 'instructions') ?? null;
  const maxOutputTokens = optionalInteger(body, 'max_output_tokens', 1) ?? optionalInteger(body, 'max_tokens', 1) ?? null;
  const truncation = optionalString(body, 'truncation') ?? 'auto';
  if (truncation !== 'auto' && truncation !== 'disabled') throw invalidRequest('truncation must be "auto" or "disabled"', 'truncation');
  const reasoning = optionalObject(body, 'reasoning');
  const reasoningEffort = reasoning ? (optionalString(reasoning, 'effort', 'reasoning.effort') ?? null) : null;

  const sampling = readSampling({
    temperature: body.temperature,
    top_p: body.top_p,
    max_tokens: maxOutputTokens ?? undefined,
    reasoning_effort: reasoningEffort ?? undefined,
  });
  return {
    model,
    messages: instructions ? [{ role: 'system', content: instructions }, ...inputMessages] : inputMessages,
    instructions,
    maxOutputTokens,
    temperature: optionalNumber(body, 'temperature', 0, 2) ?? null,
    topP: optionalNumber(body, 'top_p', 0, 1) ?? null,
    truncation,
    store: optionalBoolean(body, 'store') ?? true,
    parallelToolCalls: optionalBoolean(body, 'parallel_tool_calls') ?? true,
    reasoningEffort,
    user: optionalString(body, 'user') ?? null,
    metadata: optionalObject(body, 'metadata') ?? {},
    sampling,
    labels: optionalLabels(body, 'categories') ?? null,
  };
}
