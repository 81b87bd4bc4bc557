/**
 * The content blocks of Anthropic's Messages API as POST /v1/messages takes them: text,
 * image (base64 or url), document (base64 PDF, plain text, url, or content blocks),
 * tool_use, tool_result (a string or blocks, `is_error`; inside it, text, images, documents
 * and `tool_reference` blocks, which a tool search answers with the names of the deferred
 * tools it loaded), thinking and redacted_thinking.
 * A block's `type` is checked first, then what that type must carry; any other type is
 * refused naming the block.
 */
import { OptionalBoolean, OptionalObject, OptionalString, typed } from '../fields.js';

type Json = Record<string, unknown>;

export type ImageSourceIn = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
export type DocumentSourceIn =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'text'; media_type?: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'content'; content: string | ContentBlockIn[] };

export type ContentBlockIn =
  | { type: 'text'; text: string; cache_control?: Json | null }
  | { type: 'image'; source: ImageSourceIn; cache_control?: Json | null }
  | { type: 'document'; source: DocumentSourceIn; title?: string | null; context?: string | null; cache_control?: Json | null }
  | { type: 'tool_use'; id: string; name: string; input: Json; cache_control?: Json | null }
  | { type: 'tool_result'; tool_use_id: string; content?: string | ContentBlockIn[] | null; is_error?: boolean | null; cache_control?: Json | null }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_reference'; tool_name: string };

export const BLOCK_TYPES = ['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'] as const;

const wordingOf = (message: string) => ({ default: message, missing: message });
const requiredString = (message = '{param} must be a string') => typed('string', {}, wordingOf(message));

/** Applies `then` to a node whose `type` is one of `types`. */
const whenType = (types: readonly string[], then: Json) => ({ if: { required: ['type'], properties: { type: { enum: types } } }, then });

const typeIs = (types: readonly string[], what: string) =>
  typed('string', { enum: types }, wordingOf(`{param} must be one of ${types.join(', ')}${what}`));

const ImageSource = typed<ImageSourceIn>(
  'object',
  {
    allOf: [
      { required: ['type'], properties: { type: typeIs(['base64', 'url'], '') } },
      whenType(['base64'], { required: ['media_type', 'data'], properties: { media_type: typeIs(['image/jpeg', 'image/png', 'image/gif', 'image/webp'], ''), data: requiredString('{param} must be a string (base64)') } }),
      whenType(['url'], { required: ['url'], properties: { url: requiredString() } }),
    ],
  },
  wordingOf('{param} must be an object with type base64 or url'),
);

const documentSource = (innerBlocks: Json | null) => typed<DocumentSourceIn>(
  'object',
  {
    allOf: [
      { required: ['type'], properties: { type: typeIs(['base64', 'text', 'url', 'content'], '') } },
      whenType(['base64'], { required: ['media_type', 'data'], properties: { media_type: typeIs(['application/pdf'], ''), data: requiredString('{param} must be a string (base64)') } }),
      whenType(['text'], { required: ['data'], properties: { data: requiredString() } }),
      whenType(['url'], { required: ['url'], properties: { url: requiredString() } }),
      innerBlocks
        ? whenType(['content'], { required: ['content'], properties: { content: typed(['string', 'array'], { items: innerBlocks }, wordingOf('{param} must be a string or an array of content blocks')) } })
        : whenType(['content'], { not: {}, 'x-error': { default: '{param} may not nest a content document here' } }),
    ],
  },
  wordingOf('{param} must be an object with type base64, text, url or content'),
);

const textPayload = whenType(['text'], { required: ['text'], properties: { text: requiredString() } });
const imagePayload = whenType(['image'], { required: ['source'], properties: { source: ImageSource } });
const documentPayload = (innerBlocks: Json | null) =>
  whenType(['document'], { required: ['source'], properties: { source: documentSource(innerBlocks), title: OptionalString(), context: OptionalString() } });

const toolReferencePayload = whenType(['tool_reference'], { required: ['tool_name'], properties: { tool_name: requiredString() } });

/** A block inside a content document: text, an image or a document (no deeper nesting). */
const InnerBlock = typed<ContentBlockIn>(
  'object',
  { allOf: [{ required: ['type'], properties: { type: typeIs(['text', 'image', 'document'], ' inside a document') } }, textPayload, imagePayload, documentPayload(null)] },
  wordingOf('{param} must be a content block object'),
);

/** A block inside a tool result: text, an image, a document, or a `tool_reference` naming a deferred tool a tool search loaded. */
const ToolResultBlock = typed<ContentBlockIn>(
  'object',
  {
    allOf: [
      { required: ['type'], properties: { type: typeIs(['text', 'image', 'document', 'tool_reference'], ' inside a tool result') } },
      textPayload,
      imagePayload,
      documentPayload(null),
      toolReferencePayload,
    ],
  },
  wordingOf('{param} must be a content block object'),
);

/** The payload each block type must carry. */
const BLOCK_PAYLOADS = [
  textPayload,
  imagePayload,
  documentPayload(InnerBlock),
  whenType(['tool_use'], {
    required: ['id', 'name', 'input'],
    properties: { id: requiredString(), name: requiredString(), input: typed('object', {}, wordingOf('{param} must be an object')) },
  }),
  whenType(['tool_result'], {
    required: ['tool_use_id'],
    properties: {
      tool_use_id: requiredString(),
      content: typed(['string', 'array', 'null'], { items: ToolResultBlock }, wordingOf('{param} must be a string or an array of content blocks')),
      is_error: OptionalBoolean(),
    },
  }),
  whenType(['thinking'], { required: ['thinking', 'signature'], properties: { thinking: requiredString(), signature: requiredString() } }),
  whenType(['redacted_thinking'], { required: ['data'], properties: { data: requiredString() } }),
];

/** One content block of a message. */
export const ContentBlock = typed<ContentBlockIn>(
  'object',
  {
    allOf: [{ required: ['type'], properties: { type: typeIs(BLOCK_TYPES, ' (other block types are not supported here)') } }, ...BLOCK_PAYLOADS],
    properties: { cache_control: OptionalObject() },
  },
  wordingOf('{param} must be a content block object'),
);
