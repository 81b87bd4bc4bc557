/**
 * The body of POST /v1/chat/completions (and of a batch line on that endpoint): the one
 * definition the route and the batch runner validate against, and the typed value the
 * domain receives. Properties are declared in the order a single fault is named.
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

export type ChatRoleIn = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/** A content part as sent: text parts are read, the others (images, audio, files) are carried to the engine. */
export type ContentPartIn =
  | { type: 'text' | 'input_text' | 'output_text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: Record<string, unknown> }
  | { type: 'refusal'; refusal: string };

export interface ChatMessageIn {
  role: ChatRoleIn;
  /** Null (or absent) only on an assistant message that carries tool_calls. */
  content?: string | ContentPartIn[] | null;
  name?: string | null;
  tool_call_id?: string | null;
  tool_calls?: Record<string, unknown>[] | null;
}

const PART_TYPES = ['text', 'input_text', 'output_text', 'image_url', 'input_audio', 'file', 'refusal'];
const PART_TYPE_WORDING = '{param} must be one of text, image_url, input_audio, file';
const PartType = typed('string', { enum: PART_TYPES }, { default: PART_TYPE_WORDING, missing: PART_TYPE_WORDING });

/** What each part type must carry: the field named after it, of this JSON type. */
const PART_PAYLOAD: ReadonlyArray<[string[], string, string]> = [
  [['text', 'input_text', 'output_text'], 'text', 'string'],
  [['image_url'], 'image_url', 'object'],
  [['input_audio'], 'input_audio', 'object'],
  [['file'], 'file', 'object'],
  [['refusal'], 'refusal', 'string'],
];

/**
 * The part's type is checked first (in allOf, which Ajv runs before `required`), then the
 * payload its type names; the allOf branches have no `type` of their own, so a part that
 * is not an object fails on the outer one.
 */
const ContentPart = typed<ContentPartIn>(
  'object',
  {
    allOf: [
      { required: ['type'], properties: { type: PartType } },
      ...PART_PAYLOAD.map(([types, field, type]) => ({
        if: { properties: { type: { enum: types } } },
        then: {
          required: [field],
          properties: {
            [field]: typed(type, {}, { default: `{param} must be ${type === 'string' ? 'a string' : 'an object'}`, missing: `{param} must be ${type === 'string' ? 'a string' : 'an object'}` }),
          },
        },
      })),
    ],
    properties: { type: PartType },
  },
  { type: '{param} must be an object' },
);

const CONTENT_WORDING = '{param} must be a non-empty string or an array of text parts';

/** A string, or parts; text parts are joined with newlines where Sluice reads the text. */
export const MessageContent = typed<string | ContentPartIn[] | null>(
  ['string', 'array', 'null'],
  { items: ContentPart, description: 'a string, or an array of content parts (text, image_url, input_audio, file)' },
  { default: CONTENT_WORDING },
);

/** Content is required (and not empty) except on an assistant message that carries tool calls. */
const CONTENT_UNLESS_TOOL_CALLS = {
  if: { required: ['role', 'tool_calls'], properties: { role: { const: 'assistant' }, tool_calls: { type: 'array', minItems: 1 } } },
  else: {
    required: ['content'],
    properties: {
      content: typed(['string', 'array'], { minLength: 1, minItems: 1 }, {
        minLength: '{param} must be a non-empty string',
        default: CONTENT_WORDING,
        null: '{param} is required',
      }),
    },
  },
};

export const messageProperties = {
  role: typed<ChatRoleIn>(
    'string',
    { enum: ['system', 'developer', 'user', 'assistant', 'tool'], description: 'developer is read as system' },
    { default: '{param} must be one of system, user, assistant, tool, developer', null: '{param} is required' },
  ),
  content: Type.Optional(MessageContent),
  name: OptionalString(),
  tool_call_id: OptionalString(),
  tool_calls: Type.Optional(
    typed<Record<string, unknown>[] | null>(['array', 'null'], { items: typed('object', {}, { default: '{param} must be an object' }) }, {
      type: '{param} must be an array of tool calls',
    }),
  ),
};

export const MESSAGE_WORDING = { type: '{param} must be an object with role and content, got {got}' };

const ChatMessage = typed<ChatMessageIn>(
  'object',
  { ...CONTENT_UNLESS_TOOL_CALLS, required: ['role'], properties: messageProperties },
  MESSAGE_WORDING,
);

/** A list of objects the engine reads (tools); Sluice checks only that it is one. */
const OptionalObjects = (description: string) =>
  Type.Optional(
    typed<Record<string, unknown>[] | null>(['array', 'null'], { items: typed('object', {}, { default: '{param} must be an object' }), description }, {
      type: '{param} must be an array of objects, got {got}',
    }),
  );

/**
 * Fields Sluice reads are checked here; every other field is carried to an engine
 * unchanged (and refused, naming the field and the model, by a runtime that cannot
 * honour it).
 */
export const ChatCompletionBody = JsonBody(
  {
    model: RequiredString({ description: 'a model id from GET /v1/models' }),
    messages: typed<ChatMessageIn[]>('array', { minItems: 1, items: ChatMessage }, { default: '{param} must be a non-empty array', null: '{param} is required' }),
    n: OptionalInteger(1, { maximum: 128, description: 'choices to generate; each is held for the output cap' }, { maximum: 'n must be an integer between 1 and 128' }),
    tools: OptionalObjects('function tools, carried to the engine'),
    tool_choice: Type.Optional(
      typed<string | Record<string, unknown> | null>(['string', 'object', 'null'], { description: 'none, auto, required, or a named function' }, {
        type: '{param} must be a string or an object, got {got}',
      }),
    ),
    parallel_tool_calls: OptionalBoolean(),
    stream: OptionalBoolean({ description: 'true: server-sent events of chat.completion.chunk objects' }),
    stream_options: OptionalShape<{ include_usage?: boolean | null }>({ properties: { include_usage: OptionalBoolean() } }),
    metadata: OptionalObject({ description: 'model options, passed to the model (e.g. multi_label for zero-shot models)' }),
    temperature: OptionalNumber(0, 2),
    top_p: OptionalNumber(0, 1),
    presence_penalty: OptionalNumber(-2, 2),
    frequency_penalty: OptionalNumber(-2, 2),
    max_tokens: OptionalInteger(1),
    max_completion_tokens: OptionalInteger(1),
    seed: OptionalInteger(Number.MIN_SAFE_INTEGER),
    reasoning_effort: OptionalString(),
    response_format: OptionalObject({ description: 'text, json_object or json_schema' }),
    logprobs: OptionalBoolean(),
    top_logprobs: OptionalInteger(0, { maximum: 20 }, { default: 'top_logprobs must be an integer between 0 and 20' }),
    logit_bias: OptionalObject({ description: 'token id → bias (-100 to 100), carried to the engine' }),
    user: OptionalString(),
    stop: Type.Optional(
      typed<string | string[] | null>(
        ['string', 'array', 'null'],
        { maxItems: 4, items: typed('string', {}, { default: 'stop must be a string or an array of at most 4 strings', param: 'stop' }) },
        { default: 'stop must be a string or an array of at most 4 strings' },
      ),
    ),
    prediction: OptionalObject({ description: 'predicted output ({"type": "content", "content": ...}), carried to the engine' }),
    service_tier: OptionalString({ description: 'carried to the engine' }),
    categories: OptionalLabels(),
  },
  { description: 'Other fields (modalities, audio, web_search_options, ...) are carried to an upstream engine unchanged.' },
);

export type ChatCompletionRequestBody = Static<typeof ChatCompletionBody>;
