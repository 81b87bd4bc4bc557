/**
 * The arguments of the MCP tools that call one-text-in models (`classify`, `extract`): one
 * text as `input` instead of a conversation, and the chat completion body's own fields for
 * the rest (`model`, `categories` as `labels`, `metadata`, `max_tokens`), so the tool and
 * the route word a fault the same way. The tool turns them into the chat completion body
 * the route would have received, checked again by that body's validator.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ChatCompletionBody } from './chat-completions.js';
import { JsonBody, OptionalLabels, OptionalNumber, OptionalObject, RequiredString, typed } from './fields.js';

const chat = ChatCompletionBody.properties;

/** The most entity labels a GLiNER call takes (the runtime's own limit). */
export const MAX_ENTITY_LABELS = 50;

/** `classify`: a text scored by a classifier pack's taxonomies, or against labels by a zero-shot model. */
export const ClassifyToolBody = JsonBody({
  model: chat.model,
  input: RequiredString({ description: 'the text to classify (a URL or domain for zlm-v1-iab-domain-classifier)' }),
  labels: OptionalLabels(),
  metadata: chat.metadata,
});

/** `extract`: entities by label (GLiNER models), or JSON by a JSON Schema (chat models). */
export const ExtractToolBody = JsonBody({
  model: chat.model,
  input: RequiredString({ description: 'the text to extract from' }),
  labels: Type.Optional(
    typed<string[] | null>(
      ['array', 'null'],
      {
        minItems: 1,
        maxItems: MAX_ENTITY_LABELS,
        items: typed('string', { pattern: '\\S' }, { default: '{param} must be a non-empty string' }),
        description: `entity labels for GLiNER models (1 to ${MAX_ENTITY_LABELS}), e.g. ["person", "organization"]`,
      },
      { default: '{param} must be a non-empty array of strings', maxItems: `At most ${MAX_ENTITY_LABELS} labels are allowed, got {count}` },
    ),
  ),
  threshold: OptionalNumber(0, 1, { description: 'GLiNER models: the lowest span score kept (default 0.5)' }),
  schema: OptionalObject({ description: 'chat models: the JSON Schema the answer follows (sent as response_format json_schema)' }),
  metadata: OptionalObject({ description: 'GLiNER model options (usecase, mask, categories, schema), as on /v1/chat/completions' }),
  max_tokens: chat.max_tokens,
});

export type ExtractToolArgs = Static<typeof ExtractToolBody>;
