/**
 * A chat-completion request body → a validated ChatRequest. Roles: system, user,
 * assistant, tool, developer (developer becomes system). Content: a string, or an array
 * of text parts joined with newlines. Sampling parameters are checked and passed through;
 * `metadata` carries model options; `categories` carries candidate labels.
 */
import { invalidRequest } from '../shared/errors.js';
import type { ChatMessage, ChatRole } from '../models/inference-backend.port.js';
import {
  type Body,
  describe,
  optionalBoolean,
  optionalInteger,
  optionalLabels,
  optionalNumber,
  optionalObject,
  optionalString,
  requireObject,
  requiredString,
} from './request-fields.js';

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  /** The client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  options: Record<string, unknown>;
  sampling: Record<string, unknown>;
  /** Labels from `categories`; labels in a system message are read later, per model. */
  labels: string[] | null;
}

/** A Map: the role is the client's string, and `constructor` must not name a role. */
const ROLES: ReadonlyMap<string, ChatRole> = new Map([
  ['system', 'system'],
  ['developer', 'system'],
  ['user', 'user'],
  ['assistant', 'assistant'],
  ['tool', 'tool'],
]);

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

function readContent(value: unknown, param: string): string {
  if (typeof value === 'string') {
    if (value === '') throw invalidRequest(`${param} must be a non-empty string`, param);
    return value;
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw invalidRequest(`${param} must be a non-empty string or an array of text parts`, param);
  }
  const texts = value.map((part: unknown, i) => {
    const p = part as Body | null;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw invalidRequest(`${param}[${i}] must be an object`, `${param}[${i}]`);
    if (typeof p.type !== 'string' || !TEXT_PART_TYPES.has(p.type)) {
      throw invalidRequest(`${param}[${i}].type must be "text"; only text content is supported`, `${param}[${i}].type`);
    }
    if (typeof p.text !== 'string') throw invalidRequest(`${param}[${i}].text must be a string`, `${param}[${i}].text`);
    return p.text;
  });
  const joined = texts.join('\n');
  if (joined === '') throw invalidRequest(`${param} must not be empty`, param);
  return joined;
}

/** One `{role, content}` message at `param` (e.g. `messages[2]`). */
export function readMessage(value: unknown, param: string): ChatMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(`${param} must be an object with role and content, got ${describe(value)}`, param);
  }
  const m = value as Body;
  if (m.role === undefined || m.role === null) throw invalidRequest(`${param}.role is required`, `${param}.role`);
  const role = typeof m.role === 'string' ? ROLES.get(m.role) : undefined;
  if (!role) {
    throw invalidRequest(`${param}.role must be one of system, user, assistant, tool, developer`, `${param}.role`);
  }
  if (m.content === undefined || m.content === null) throw invalidRequest(`${param}.content is required`, `${param}.content`);
  const message: ChatMessage = { role, content: readContent(m.content, `${param}.content`) };
  const name = optionalString(m, 'name', `${param}.name`);
  if (name !== undefined) message.name = name;
  const toolCallId = optionalString(m, 'tool_call_id', `${param}.tool_call_id`);
  if (toolCallId !== undefined) message.tool_call_id = toolCallId;
  return message;
}

export function readMessages(body: Body, field: string): ChatMessage[] {
  const value = body[field];
  if (value === undefined || value === null) throw invalidRequest(`${field} is required`, field);
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest(`${field} must be a non-empty array`, field);
  return value.map((m, i) => readMessage(m, `${field}[${i}]`));
}

/** Sampling parameters every runtime understands; checked here, passed through as-is. */
export function readSampling(body: Body): Record<string, unknown> {
  const read: Record<string, unknown> = {
    temperature: optionalNumber(body, 'temperature', 0, 2),
    top_p: optionalNumber(body, 'top_p', 0, 1),
    presence_penalty: optionalNumber(body, 'presence_penalty', -2, 2),
    frequency_penalty: optionalNumber(body, 'frequency_penalty', -2, 2),
    max_tokens: optionalInteger(body, 'max_tokens', 1),
    max_completion_tokens: optionalInteger(body, 'max_completion_tokens', 1),
    seed: optionalInteger(body, 'seed', Number.MIN_SAFE_INTEGER),
    reasoning_effort: optionalString(body, 'reasoning_effort'),
    response_format: optionalObject(body, 'response_format'),
  };
  const sampling: Record<string, unknown> = {};
  for (const name in read) if (read[name] !== undefined) sampling[name] = read[name];
  const stop = body.stop;
  if (stop !== undefined && stop !== null) {
    const ok = typeof stop === 'string' || (Array.isArray(stop) && stop.length <= 4 && stop.every((s) => typeof s === 'string'));
    if (!ok) throw invalidRequest('stop must be a string or an array of at most 4 strings', 'stop');
    sampling.stop = stop;
  }
  return sampling;
}

/** Features Sluice does not serve are refused by name rather than silently ignored. */
export function refuseUnsupported(body: Body): void {
  const n = optionalInteger(body, 'n', 1);
  if (n !== undefined && n !== 1) throw invalidRequest('n must be 1; only one choice per request is supported', 'n');
  if (Array.isArray(body.tools) && body.tools.length > 0) throw invalidRequest('tools are not supported', 'tools');
}

export function parseChatRequest(raw: unknown): ChatRequest {
  const body = requireObject(raw);
  const model = requiredString(body, 'model');
  const messages = readMessages(body, 'messages');
  refuseUnsupported(body);
  const stream = optionalBoolean(body, 'stream') ?? false;
  const streamOptions = optionalObject(body, 'stream_options');
  const includeUsage = streamOptions ? (optionalBoolean(streamOptions, 'include_usage', 'stream_options.include_usage') ?? false) : false;
  return {
    model,
    messages,
    stream,
    includeUsage,
    options: optionalObject(body, 'metadata') ?? {},
    sampling: readSampling(body),
    labels: optionalLabels(body, 'categories') ?? null,
  };
}
