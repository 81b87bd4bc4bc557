/**
 * The input items of POST /v1/responses: messages (with text, image, file and audio
 * parts), function calls, their outputs and reasoning, as OpenAI's Responses API sends
 * them. Each item's `type` is checked first, then what that type must carry.
 */
import { Type } from '@sinclair/typebox';
import { MESSAGE_WORDING, messageProperties } from '../chat-completions/body.js';
import { OptionalString, typed } from '../fields.js';

/** The items as the domain reads them (domain/responses/response-items.types.ts), under the wire's names. */
export type {
  FunctionCallItemIn,
  FunctionCallOutputItemIn,
  MessageItemIn,
  ReasoningItemIn,
  ResponseContentPartIn,
  ResponseInputItemIn,
} from '../../domain/responses/response-items.types.js';
import type { ResponseContentPartIn, ResponseInputItemIn } from '../../domain/responses/response-items.types.js';

const PART_TYPES = ['input_text', 'output_text', 'text', 'input_image', 'input_file', 'input_audio', 'refusal'];
const PART_TYPE_WORDING = '{param} must be one of input_text, input_image, input_file, input_audio, output_text, refusal';
const PartType = typed('string', { enum: PART_TYPES }, { default: PART_TYPE_WORDING, missing: PART_TYPE_WORDING });

const requiredString = (message = '{param} must be a string') => typed('string', {}, { default: message, missing: message });

/** Applies `then` to a node whose `type` is one of `types` (a node without a type is none of them). */
const whenType = (types: string[], then: Record<string, unknown>) => ({ if: { required: ['type'], properties: { type: { enum: types } } }, then });

/** An image by URL (or data: URL) or by file id; a file by its data, id or URL. */
const ContentPart = typed<ResponseContentPartIn>(
  'object',
  {
    allOf: [
      { required: ['type'], properties: { type: PartType } },
      whenType(['input_text', 'output_text', 'text'], { required: ['text'], properties: { text: requiredString() } }),
      whenType(['refusal'], { required: ['refusal'], properties: { refusal: requiredString() } }),
      whenType(['input_image'], {
        properties: { image_url: OptionalString(), file_id: OptionalString(), detail: OptionalString({ enum: ['auto', 'low', 'high', null] }, { enum: '{param} must be auto, low or high' }) },
        if: { not: { required: ['file_id'], properties: { file_id: { type: 'string' } } } },
        then: { required: ['image_url'], properties: { image_url: requiredString('{param} must be a string (a URL or a data: URL) when file_id is not sent') } },
      }),
      whenType(['input_file'], {
        properties: { file_data: OptionalString(), file_id: OptionalString(), file_url: OptionalString(), filename: OptionalString() },
        if: { not: { anyOf: [{ required: ['file_id'], properties: { file_id: { type: 'string' } } }, { required: ['file_url'], properties: { file_url: { type: 'string' } } }] } },
        then: { required: ['file_data'], properties: { file_data: requiredString('{param} must be a string (a data: URL or base64) when neither file_id nor file_url is sent') } },
      }),
      whenType(['input_audio'], {
        required: ['input_audio'],
        properties: {
          input_audio: typed('object', { required: ['data', 'format'], properties: { data: requiredString(), format: requiredString() } }, { default: '{param} must be an object with data and format', missing: '{param} must be an object with data and format' }),
        },
      }),
    ],
    properties: { type: PartType },
  },
  { type: '{param} must be an object' },
);

const CONTENT_WORDING = '{param} must be a non-empty string or an array of content parts';

/** A message's content: a string, or parts (text parts are joined with newlines where Sluice reads the text). */
const MessageContent = typed<string | ResponseContentPartIn[]>(
  ['string', 'array'],
  { minLength: 1, minItems: 1, items: ContentPart, description: 'a string, or an array of content parts (input_text, input_image, input_file, input_audio)' },
  { minLength: '{param} must be a non-empty string', default: CONTENT_WORDING, null: '{param} is required', missing: '{param} is required' },
);

const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning'];
const ItemType = typed('string', { enum: ITEM_TYPES }, { default: '{param} must be one of message, function_call, function_call_output, reasoning' });

/** A message item: `type` may be left out (OpenAI's "easy" input message). */
const MESSAGE = {
  required: ['role', 'content'],
  properties: { role: messageProperties.role, content: MessageContent, name: messageProperties.name, tool_call_id: messageProperties.tool_call_id },
};

export const InputItem = typed<ResponseInputItemIn>(
  'object',
  {
    allOf: [
      { properties: { type: ItemType } },
      { if: { required: ['type'], properties: { type: { not: { const: 'message' } } } }, else: MESSAGE },
      whenType(['function_call'], {
        required: ['call_id', 'name', 'arguments'],
        properties: { call_id: requiredString(), name: requiredString(), namespace: OptionalString(), arguments: requiredString('{param} must be a string (JSON text)') },
      }),
      whenType(['reasoning'], {
        properties: {
          encrypted_content: OptionalString(),
          content: Type.Optional(
            typed(['array', 'null'], { items: typed('object', { properties: { type: OptionalString(), text: OptionalString() } }, { type: '{param} must be an object' }) }, { type: '{param} must be an array of reasoning_text parts, got {got}' }),
          ),
        },
      }),
      whenType(['function_call_output'], {
        required: ['call_id', 'output'],
        properties: { call_id: requiredString(), output: typed(['string', 'array'], { items: ContentPart }, { default: '{param} must be a string or an array of content parts', missing: '{param} is required' }) },
      }),
    ],
    properties: { type: Type.Optional(ItemType) },
  },
  MESSAGE_WORDING,
);

/** A function tool, in the Responses API's flat shape. */
export interface FunctionToolIn {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export const FunctionTool = typed<FunctionToolIn>(
  'object',
  {
    allOf: [
      {
        required: ['type'],
        properties: {
          type: typed('string', { const: 'function' }, { default: '{param} "{value}" is not supported; only function tools are', missing: '{param} is required' }),
        },
      },
    ],
    required: ['name'],
    properties: {
      name: typed('string', { pattern: '^[a-zA-Z0-9_-]{1,64}$' }, { default: '{param} must be 1 to 64 letters, digits, underscores or dashes', missing: '{param} is required' }),
      description: OptionalString(),
      parameters: Type.Optional(typed(['object', 'null'], {}, { default: '{param} must be a JSON schema object' })),
      strict: Type.Optional(typed(['boolean', 'null'], {}, { default: '{param} must be a boolean, got {got}' })),
    },
  },
  { type: '{param} must be an object' },
);

export type ToolChoiceIn = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

/** none, auto, required, or `{type: "function", name}`. */
export const ToolChoice = typed<ToolChoiceIn | null>(
  ['string', 'object', 'null'],
  {
    if: { type: 'string' },
    then: typed('string', { enum: ['none', 'auto', 'required'] }, { default: '{param} must be none, auto, required or {"type": "function", "name": ...}' }),
    else: {
      if: { type: 'object' },
      then: {
        allOf: [
          {
            required: ['type'],
            properties: {
              type: typed('string', { const: 'function' }, { default: '{param} must be "function"; only function tools are supported', missing: '{param} is required' }),
            },
          },
        ],
        required: ['name'],
        properties: { name: typed('string', { minLength: 1 }, { default: '{param} must be a non-empty string', missing: '{param} is required' }) },
      },
    },
    description: 'none, auto, required, or {"type": "function", "name": ...}',
  },
  { type: '{param} must be a string or an object, got {got}' },
);

export interface TextFormatIn {
  type?: 'text' | 'json_object' | 'json_schema' | null;
  name?: string | null;
  schema?: Record<string, unknown> | null;
  strict?: boolean | null;
  description?: string | null;
}

/** `text.format`: text, json_object, or json_schema with its name and schema. */
export const TextFormat = Type.Optional(
  typed<TextFormatIn | null>(
    ['object', 'null'],
    {
      properties: {
        type: OptionalString({ enum: ['text', 'json_object', 'json_schema', null] }, { enum: '{param} "{value}" is not supported; use text, json_object or json_schema' }),
      },
      if: { required: ['type'], properties: { type: { const: 'json_schema' } } },
      then: {
        required: ['name', 'schema'],
        properties: {
          name: typed('string', { pattern: '^[a-zA-Z0-9_-]{1,64}$' }, { default: '{param} must be 1 to 64 letters, digits, underscores or dashes', missing: '{param} is required for json_schema' }),
          schema: typed('object', {}, { default: '{param} must be a JSON schema object', missing: '{param} is required for json_schema' }),
          strict: Type.Optional(typed(['boolean', 'null'], {}, { default: '{param} must be a boolean, got {got}' })),
          description: OptionalString(),
        },
      },
    },
    { type: '{param} must be an object, got {got}' },
  ),
);

export { MESSAGE_WORDING };
