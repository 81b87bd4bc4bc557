/**
 * The body of POST /v1/responses: the one definition the route validates against, and
 * the typed value the domain receives. Properties are declared in the order a single
 * fault is named. Items, tools and formats are in responses-items.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  JsonBody,
  OptionalBoolean,
  OptionalInteger,
  OptionalLabels,
  OptionalNumber,
  OptionalObject,
  OptionalShape,
  OptionalString,
  RequiredString,
  typed,
} from '../fields.js';
import { InputItem, TextFormat, ToolChoice, type ResponseInputItemIn, type TextFormatIn } from './items.js';
import { Tool, type ToolIn } from './tools.js';

export type { ToolIn } from './tools.js';
export type { FunctionToolIn, ResponseContentPartIn, ResponseInputItemIn, TextFormatIn, ToolChoiceIn } from './items.js';

/**
 * `max_tokens` is read only when `max_output_tokens` is absent (or null), so it is checked
 * only then. Ajv runs if/else before the properties, so a body with this fault and
 * another names this one.
 */
const MAX_TOKENS_WHEN_NO_MAX_OUTPUT = {
  if: { required: ['max_output_tokens'], properties: { max_output_tokens: { type: 'integer' } } },
  else: { properties: { max_tokens: OptionalInteger(1) } },
};

export const ResponsesBody = JsonBody(
  {
    model: RequiredString({ description: 'a model id from GET /v1/models' }),
    input: typed<string | ResponseInputItemIn[]>(
      ['string', 'array'],
      { minLength: 1, minItems: 1, items: InputItem, description: 'a string (one user message) or a list of items: messages, function_call, function_call_output, reasoning' },
      { default: 'input must be a non-empty string or a list of messages', null: 'input is required' },
    ),
    stream: OptionalBoolean({ description: 'true: server-sent events (response.created … response.completed), each with a sequence_number' }),
    stream_options: OptionalObject({ description: 'accepted; include_obfuscation is not used (no obfuscation is sent)' }),
    previous_response_id: OptionalString({ description: 'continue from a stored response: its conversation comes before this input' }),
    background: OptionalBoolean({ description: 'answer at once with status `queued`; a worker runs the response (requires store)' }),
    conversation: Type.Optional(
      typed<null>('null', { description: 'not supported' }, { default: 'conversation is not supported; send the whole conversation as input' }),
    ),
    tools: Type.Optional(
      typed<ToolIn[] | null>(['array', 'null'], { items: Tool, description: 'function tools and namespaces of them, translated to the engine\'s chat tools; hosted tools (web_search, …) are dropped or refused (responses.hosted_tools)' }, {
        type: '{param} must be an array of tools, got {got}',
      }),
    ),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: OptionalBoolean(),
    max_tool_calls: OptionalInteger(1, { description: 'function calls beyond this many are left out of the output' }),
    text: OptionalShape<{ format?: TextFormatIn | null; verbosity?: string | null }>({
      properties: { format: TextFormat, verbosity: OptionalString({ enum: ['low', 'medium', 'high', null] }, { enum: '{param} must be low, medium or high' }) },
    }),
    instructions: OptionalString({ description: 'a leading system message; for zero-shot models, the candidate labels' }),
    max_output_tokens: OptionalInteger(1),
    max_tokens: Type.Optional(
      Type.Unsafe<number | null>({ description: 'an integer of at least 1, read when max_output_tokens is absent' }),
    ),
    truncation: OptionalString<'auto' | 'disabled'>({ enum: ['auto', 'disabled', null] }, { enum: 'truncation must be "auto" or "disabled"' }),
    reasoning: OptionalShape<{ effort?: string | null; summary?: string | null }>({ properties: { effort: OptionalString(), summary: OptionalString() } }),
    temperature: OptionalNumber(0, 2),
    top_p: OptionalNumber(0, 1),
    presence_penalty: OptionalNumber(-2, 2),
    frequency_penalty: OptionalNumber(-2, 2),
    top_logprobs: OptionalInteger(0, { maximum: 20 }, { default: 'top_logprobs must be an integer between 0 and 20' }),
    include: Type.Optional(
      typed<string[] | null>(['array', 'null'], { items: typed('string', {}, { default: '{param} must be a string' }), description: 'accepted; message.output_text.logprobs asks for logprobs' }, {
        type: '{param} must be an array of strings, got {got}',
      }),
    ),
    store: OptionalBoolean({ description: 'keep the response (default true): retrieve it, list its input items, continue from it' }),
    service_tier: OptionalString(),
    safety_identifier: OptionalString(),
    prompt_cache_key: OptionalString(),
    user: OptionalString(),
    client_metadata: OptionalObject({ description: 'accepted and kept from the engine (a client\'s own telemetry, e.g. Codex\'s session ids)' }),
    metadata: OptionalObject({ description: 'echoed, and passed to the model as options' }),
    categories: OptionalLabels(),
  },
  { description: 'Other fields are carried to an upstream engine unchanged.', ...MAX_TOKENS_WHEN_NO_MAX_OUTPUT },
);

export type ResponsesRequestBody = Static<typeof ResponsesBody>;
