/**
 * The body of POST /v1/responses: the one definition the route validates against, and
 * the typed value the domain receives. Properties are declared in the order a single
 * fault is named.
 */
import { Type, type Static } from '@sinclair/typebox';
import { MESSAGE_WORDING, messageProperties, type ChatMessageIn } from './chat-completions.js';
import {
  JsonBody,
  OptionalBoolean,
  OptionalInteger,
  OptionalLabels,
  OptionalNumber,
  OptionalObject,
  OptionalShape,
  OptionalString,
  Refused,
  RequiredString,
  typed,
} from './fields.js';

export interface InputTextPartIn {
  type: 'text' | 'input_text' | 'output_text';
  text: string;
}

export interface InputItemIn {
  type?: 'message' | null;
  role: ChatMessageIn['role'];
  content: string | InputTextPartIn[];
  name?: string | null;
  tool_call_id?: string | null;
}

const ONLY_TEXT = '{param} must be "text"; only text content is supported';

const TextPartType = typed('string', { enum: ['text', 'input_text', 'output_text'] }, { default: ONLY_TEXT, missing: ONLY_TEXT });

/** The part's type is checked first (in allOf, which Ajv runs before `required`). */
const TextPart = typed<InputTextPartIn>(
  'object',
  {
    allOf: [{ required: ['type'], properties: { type: TextPartType } }],
    required: ['text'],
    properties: { type: TextPartType, text: typed('string', {}, { default: '{param} must be a string', missing: '{param} must be a string' }) },
  },
  { type: '{param} must be an object' },
);

/** A string, or text parts joined with newlines. */
const TextContent = typed<string | InputTextPartIn[]>(
  ['string', 'array'],
  { minLength: 1, minItems: 1, items: TextPart, description: 'a string, or an array of text parts' },
  {
    minLength: '{param} must be a non-empty string',
    default: '{param} must be a non-empty string or an array of text parts',
    null: '{param} is required',
  },
);

const ItemType = typed('string', { const: 'message' }, { default: '{param} must be "message"; only message items are supported' });

/** A message item; its `type` is checked first (in allOf, which Ajv runs before `required`). */
const InputItem = typed<InputItemIn>(
  'object',
  {
    allOf: [{ properties: { type: ItemType } }],
    required: ['role', 'content'],
    properties: { type: Type.Optional(ItemType), role: messageProperties.role, content: TextContent, name: messageProperties.name, tool_call_id: messageProperties.tool_call_id },
  },
  MESSAGE_WORDING,
);

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
    input: typed<string | InputItemIn[]>(
      ['string', 'array'],
      { minLength: 1, minItems: 1, items: InputItem, description: 'a string (one user message) or a list of messages' },
      { default: 'input must be a non-empty string or a list of messages', null: 'input is required' },
    ),
    stream: Refused({ const: true }, 'stream is not supported on /v1/responses; use /v1/chat/completions to stream', {
      description: 'not supported; stream with /v1/chat/completions',
    }),
    previous_response_id: OptionalString({ description: 'continue from a stored response: its conversation comes before this input' }),
    background: OptionalBoolean({ description: 'answer at once with status `queued`; a worker runs the response (requires store)' }),
    tools: Refused({ type: 'array', minItems: 1 }, 'tools are not supported', { description: 'not supported; an empty list is accepted' }),
    text: OptionalShape<{ format?: { type?: string | null } | null }>({
      properties: {
        format: OptionalObject({
          properties: {
            type: OptionalString({ enum: ['text', null] }, { enum: '{param} "{value}" is not supported; only "text" is' }),
          },
        }),
      },
    }),
    instructions: OptionalString({ description: 'a leading system message; for zero-shot models, the candidate labels' }),
    max_output_tokens: OptionalInteger(1),
    max_tokens: Type.Optional(
      Type.Unsafe<number | null>({ description: 'an integer of at least 1, read when max_output_tokens is absent' }),
    ),
    truncation: OptionalString<'auto' | 'disabled'>({ enum: ['auto', 'disabled', null] }, { enum: 'truncation must be "auto" or "disabled"' }),
    reasoning: OptionalShape<{ effort?: string | null }>({ properties: { effort: OptionalString() } }),
    temperature: OptionalNumber(0, 2),
    top_p: OptionalNumber(0, 1),
    store: OptionalBoolean({ description: 'keep the response (default true): retrieve it, list its input items, continue from it' }),
    parallel_tool_calls: OptionalBoolean(),
    user: OptionalString(),
    metadata: OptionalObject({ description: 'echoed, and passed to the model as options' }),
    categories: OptionalLabels(),
  },
  { description: 'Other OpenAI fields are accepted and ignored.', ...MAX_TOKENS_WHEN_NO_MAX_OUTPUT },
);

export type ResponsesRequestBody = Static<typeof ResponsesBody>;
