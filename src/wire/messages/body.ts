/**
 * The bodies of POST /v1/messages and POST /v1/messages/count_tokens (Anthropic's Messages
 * API): the one definition each route validates against, and the typed value the wire's
 * mapper reads. Properties are declared in the order a single fault is named. Fields the
 * reference has and no engine here reads (container, context_management, mcp_servers,
 * output_config, …) are accepted and left out of the engine call.
 */
import { Type, type Static } from '@sinclair/typebox';
import { JsonBody, OptionalBoolean, OptionalInteger, OptionalNumber, OptionalShape, OptionalString, RequiredString, typed } from '../fields.js';
import { ContentBlock, type ContentBlockIn } from './blocks.js';

export type { ContentBlockIn } from './blocks.js';

type Json = Record<string, unknown>;

const wordingOf = (message: string) => ({ default: message, missing: message });

export interface OutputConfigIn {
  effort?: string | null;
  format?: { type: 'json_schema'; schema: Json } | null;
}

export interface MessageParamIn {
  /** `system`: an instruction at its place in the conversation (the SDK's BetaSystemMessageParam; Claude Code 2.1.x sends one on every turn). */
  role: 'user' | 'assistant' | 'system';
  content: string | ContentBlockIn[];
}

const MessageParam = typed<MessageParamIn>(
  'object',
  {
    required: ['role', 'content'],
    properties: {
      role: typed('string', { enum: ['user', 'assistant', 'system'] }, wordingOf('{param} must be "user", "assistant" or "system"')),
      content: typed(['string', 'array'], { items: ContentBlock }, wordingOf('{param} must be a string or an array of content blocks')),
    },
  },
  { type: '{param} must be an object with role and content, got {got}' },
);

export interface TextBlockIn {
  type: 'text';
  text: string;
  cache_control?: Json | null;
}

const SystemText = typed<TextBlockIn>(
  'object',
  { required: ['type', 'text'], properties: { type: typed('string', { const: 'text' }, wordingOf('{param} must be "text"')), text: typed('string', {}, wordingOf('{param} must be a string')) } },
  wordingOf('{param} must be a text block object'),
);

export interface ToolIn {
  type?: string | null;
  name: string;
  description?: string | null;
  input_schema?: Json | null;
  /** Offered to the engine only once a `tool_reference` in the conversation names it (a tool search loaded it). */
  defer_loading?: boolean | null;
  [field: string]: unknown;
}

/** A custom tool needs `input_schema`; a server tool (`type` like `web_search_20250305`) carries its own fields. */
const Tool = typed<ToolIn>(
  'object',
  {
    allOf: [
      { properties: { type: typed(['string', 'null'], {}, { default: '{param} must be a string, got {got}' }) } },
      {
        if: { required: ['type'], properties: { type: { type: 'string', not: { const: 'custom' } } } },
        else: { required: ['input_schema'], properties: { input_schema: typed('object', {}, wordingOf('{param} must be a JSON schema object')) } },
      },
    ],
    required: ['name'],
    properties: {
      name: typed('string', { pattern: '^[a-zA-Z0-9_-]{1,128}$' }, wordingOf('{param} must be 1 to 128 letters, digits, underscores or dashes')),
      description: OptionalString(),
      defer_loading: OptionalBoolean(),
    },
  },
  { type: '{param} must be a tool object, got {got}' },
);

export type ToolChoiceIn = { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean | null } | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean | null };

const ToolChoice = typed<ToolChoiceIn | null>(
  ['object', 'null'],
  {
    allOf: [
      { required: ['type'], properties: { type: typed('string', { enum: ['auto', 'any', 'tool', 'none'] }, wordingOf('{param} must be one of auto, any, tool, none')) } },
      { if: { required: ['type'], properties: { type: { const: 'tool' } } }, then: { required: ['name'], properties: { name: typed('string', { minLength: 1 }, wordingOf('{param} must name the tool')) } } },
    ],
    properties: { disable_parallel_tool_use: OptionalBoolean() },
  },
  { type: '{param} must be an object, got {got}' },
);

export type ThinkingIn = { type: 'enabled'; budget_tokens: number; display?: string | null } | { type: 'disabled' | 'adaptive' | 'between_tools'; display?: string | null };

const Thinking = typed<ThinkingIn | null>(
  ['object', 'null'],
  {
    allOf: [
      { required: ['type'], properties: { type: typed('string', { enum: ['enabled', 'disabled', 'adaptive', 'between_tools'] }, wordingOf('{param} must be one of enabled, disabled, adaptive')) } },
      {
        if: { required: ['type'], properties: { type: { const: 'enabled' } } },
        then: { required: ['budget_tokens'], properties: { budget_tokens: typed('integer', { minimum: 1024, maximum: Number.MAX_SAFE_INTEGER }, wordingOf('{param} must be an integer of at least 1024')) } },
      },
    ],
    properties: { display: OptionalString({ enum: ['summarized', 'omitted', null] }, { enum: '{param} must be summarized or omitted' }) },
  },
  { type: '{param} must be an object, got {got}' },
);

/** What count_tokens reads: the conversation, the system prompt, the tools and the thinking settings. */
const COUNTED = {
  model: RequiredString({ description: 'a model id from GET /v1/models' }),
  messages: typed<MessageParamIn[]>('array', { minItems: 1, items: MessageParam }, { default: '{param} must be a non-empty array of messages', null: '{param} is required' }),
  system: Type.Optional(
    typed<string | TextBlockIn[] | null>(['string', 'array', 'null'], { items: SystemText, description: 'a string, or text blocks (cache_control accepted)' }, {
      type: '{param} must be a string or an array of text blocks, got {got}',
    }),
  ),
  tools: Type.Optional(
    typed<ToolIn[] | null>(['array', 'null'], { items: Tool, description: 'custom tools (input_schema); server tools are dropped or refused per messages.server_tools' }, {
      type: '{param} must be an array of tools, got {got}',
    }),
  ),
  tool_choice: Type.Optional(ToolChoice),
  thinking: Type.Optional(Thinking),
};

export const MessagesBody = JsonBody(
  {
    model: COUNTED.model,
    max_tokens: typed<number>('integer', { minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'held at the model\'s own output limit' }, {
      default: '{param} must be an integer of at least 1',
      null: '{param} is required',
    }),
    messages: COUNTED.messages,
    system: COUNTED.system,
    stop_sequences: Type.Optional(
      typed<string[] | null>(['array', 'null'], { items: typed('string', {}, { default: '{param} must be a string' }) }, { type: '{param} must be an array of strings, got {got}' }),
    ),
    stream: OptionalBoolean({ description: 'true: server-sent events (message_start … message_stop)' }),
    temperature: OptionalNumber(0, 1),
    top_p: OptionalNumber(0, 1),
    top_k: OptionalInteger(0),
    metadata: OptionalShape<{ user_id?: string | null }>({ properties: { user_id: OptionalString() } }),
    tools: COUNTED.tools,
    tool_choice: COUNTED.tool_choice,
    thinking: COUNTED.thinking,
    service_tier: OptionalString({ enum: ['auto', 'standard_only', null] }, { enum: '{param} must be auto or standard_only' }),
    output_config: OptionalShape<OutputConfigIn>({
      properties: {
        effort: OptionalString(),
        format: Type.Optional(
          typed<{ type: 'json_schema'; schema: Json } | null>(
            ['object', 'null'],
            { required: ['type', 'schema'], properties: { type: typed('string', { const: 'json_schema' }, wordingOf('{param} must be "json_schema"')), schema: typed('object', {}, wordingOf('{param} must be a JSON schema object')) } },
            { type: '{param} must be an object, got {got}' },
          ),
        ),
      },
      description: 'format (json_schema) is sent to the engine as its structured output; effort is accepted',
    }),
  },
  { description: 'Anthropic Messages API request. Other fields of the reference are accepted and not sent to the engine.' },
);

export type MessagesRequestBody = Static<typeof MessagesBody>;

export const CountTokensBody = JsonBody(COUNTED, { description: 'Anthropic count_tokens request: what the model would see of this conversation.' });

export type CountTokensRequestBody = Static<typeof CountTokensBody>;
