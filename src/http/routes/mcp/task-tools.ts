/**
 * `classify` and `extract`: one text in, one JSON result out. Each is the chat completion
 * the REST client would send for it (the text as the user message; labels as `categories`
 * or GLiNER's `metadata.labels`; a JSON Schema as `response_format` json_schema for a chat
 * model), checked by the chat body's validator and run by the chat service, so it is
 * admitted, held, metered and refused exactly as on /v1/chat/completions. The answer is
 * the model's JSON result, parsed, with the model and usage.
 */
import type { Caller } from '../../../domain/identity/caller.js';
import type { ToolOffer } from '../../../domain/mcp/tool-catalogue.js';
import { AppError, invalidRequest, isAppError } from '../../../domain/shared/errors.js';
import { ChatCompletionBody, type ChatCompletionRequestBody } from '../../../wire/chat-completions/body.js';
import { ClassifyToolBody, ExtractToolBody, type ExtractToolArgs } from '../../../wire/tools.js';
import { parseBody } from '../../../wire/validate.js';
import { narrowed, serviceContext, type McpToolServices, type RunContext, type ToolSpec } from './tool-spec.js';

/** What a chat model is told when it extracts by a schema. */
export const EXTRACT_INSTRUCTION =
  "Extract from the user's text the information the JSON schema of your answer describes. Answer with that JSON only; use null for what the text does not say.";

/** The model's task, for a model the tool offers; anything else is refused naming the ones it offers. */
function taskOf(offer: ToolOffer, model: string): string {
  const task = offer.tasks.get(model);
  if (task !== undefined) return task;
  throw invalidRequest(`The model "${model}" is not available to ${offer.name}: the ready models are ${offer.models.join(', ')}`, 'model', 'model_not_found');
}

/** A fault the chat route names on `messages` is, for these tools, about `input`. */
function aboutInput(err: unknown): unknown {
  if (!isAppError(err) || err.param === null || !err.param.startsWith('messages')) return err;
  return new AppError(err.kind, err.message, { code: err.code, param: 'input' });
}

async function runChat(s: McpToolServices, caller: Caller, body: Record<string, unknown>, run: RunContext): Promise<unknown> {
  const checked: ChatCompletionRequestBody = parseBody(ChatCompletionBody, body);
  try {
    return await s.chat.create(caller, checked, serviceContext(run));
  } catch (err) {
    throw aboutInput(err);
  }
}

/** The chat body of an extraction: GLiNER entities by label, or a chat model's JSON by schema. */
function extractionBody(args: ExtractToolArgs, task: string): Record<string, unknown> {
  const user = { role: 'user', content: args.input };
  if (task === 'chat') {
    if (args.labels) throw invalidRequest('labels are for GLiNER models: a chat model extracts by schema', 'labels');
    if (!args.schema) throw invalidRequest('schema is required to extract with a chat model: the JSON Schema of the answer', 'schema');
    return {
      model: args.model,
      messages: [{ role: 'system', content: EXTRACT_INSTRUCTION }, user],
      response_format: { type: 'json_schema', json_schema: { name: 'extraction', schema: args.schema, strict: true } },
      ...(args.max_tokens ? { max_tokens: args.max_tokens } : {}),
    };
  }
  if (args.schema) throw invalidRequest('schema is for chat models: a GLiNER model takes labels (or metadata.usecase and metadata.schema)', 'schema');
  const metadata = { ...args.metadata, ...(args.labels ? { labels: args.labels } : {}), ...(args.threshold != null ? { threshold: args.threshold } : {}) };
  return { model: args.model, messages: [user], metadata };
}

/** A one-text-in answer: the chat completion's content as JSON (as the text when it is not JSON), with the model and usage. */
export function taskAnswer(value: unknown): Record<string, unknown> {
  const completion = value as { id: string; model: string; choices: Array<{ message: { content: string | null } }>; usage: unknown };
  const content = completion.choices[0]?.message.content ?? '';
  let result: unknown;
  try {
    result = JSON.parse(content);
  } catch {
    result = content;
  }
  return { id: completion.id, model: completion.model, result, usage: completion.usage };
}

export const TASK_TOOLS: Readonly<Record<'classify' | 'extract', ToolSpec>> = {
  classify: {
    title: 'Classify a text',
    description:
      'Classify one text: a zlm-* classifier pack scores it on its IAB taxonomies (audience, content 1.0 and 2.2, topics, keywords, intent); a zero-shot model (deberta-v3-small) against your labels (1 to 10).',
    schema: (models) => narrowed(ClassifyToolBody, models),
    run: (s, caller, args, run) => {
      const a = parseBody(ClassifyToolBody, args);
      taskOf(run.offer, a.model);
      const body = { model: a.model, messages: [{ role: 'user', content: a.input }], ...(a.labels ? { categories: a.labels } : {}), ...(a.metadata ? { metadata: a.metadata } : {}) };
      return runChat(s, caller, body, run);
    },
    answer: taskAnswer,
  },
  extract: {
    title: 'Extract from a text',
    description:
      'Extract from one text: entities by label with a GLiNER model (labels, threshold; PII with gliner-multi-pii-v1), or JSON by a JSON Schema with a chat model (schema).',
    schema: (models) => narrowed(ExtractToolBody, models),
    run: (s, caller, args, run) => {
      const a = parseBody(ExtractToolBody, args);
      return runChat(s, caller, extractionBody(a, taskOf(run.offer, a.model)), run);
    },
    answer: taskAnswer,
  },
};
