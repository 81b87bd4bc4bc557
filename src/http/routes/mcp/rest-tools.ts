/**
 * The tools that are a REST route under another name: their input schema is the route's
 * own TypeBox body (narrowed to the ready models), their answer the route's answer.
 */
import type { McpToolName } from '../../../domain/mcp/tool-catalogue.js';
import { AppError } from '../../../domain/shared/errors.js';
import { ChatCompletionBody } from '../../../wire/chat-completions/body.js';
import { EmbeddingsBody } from '../../../wire/embeddings/body.js';
import { ModerationsBody } from '../../../wire/moderations/body.js';
import { parseBody } from '../../../wire/validate.js';
import { batchWire } from '../../mappers/files-batches.js';
import { DecisionBody } from '../../schemas/decision.js';
import { batchCreateBody, BatchIdParams } from '../../schemas/files-batches.js';
import { DECISION_STATUSES } from '../v1/systemone.js';
import { field, narrowed, pick, plainSchema, serviceContext, type ToolSpec } from './tool-spec.js';

/** The fields of a chat completion a tool call may set: an answer, never a stream. */
const CHAT_FIELDS = ['model', 'messages', 'max_tokens', 'temperature', 'response_format'] as const;

function batchIdOf(args: Record<string, unknown>): string {
  const id = field(args, 'batch_id');
  if (typeof id !== 'string' || id === '') throw new AppError('invalid_request', 'batch_id must be a non-empty string', { param: 'batch_id', code: 'invalid_request_error' });
  return id;
}

export const REST_TOOLS: Readonly<Record<Exclude<McpToolName, 'classify' | 'extract' | 'transcribe'>, ToolSpec>> = {
  chat: {
    title: 'Chat completion',
    description: 'Answer a conversation with a chat model (one answer, no stream). response_format {"type": "json_schema", "json_schema": {"name", "schema"}} asks for JSON by a schema.',
    schema: (models) => narrowed(ChatCompletionBody, models, CHAT_FIELDS),
    run: (s, caller, args, run) => s.chat.create(caller, parseBody(ChatCompletionBody, pick(args, CHAT_FIELDS)), serviceContext(run)),
  },
  embed: {
    title: 'Embeddings',
    description: 'One vector per input text.',
    schema: (models) => narrowed(EmbeddingsBody, models),
    run: (s, caller, args, run) => s.embeddings.create(caller, parseBody(EmbeddingsBody, args), serviceContext(run)),
  },
  moderate: {
    title: 'Moderation',
    description: 'Classify texts against the moderation categories.',
    schema: (models) => narrowed(ModerationsBody, models),
    run: (s, caller, args, run) => s.moderations.create(caller, parseBody(ModerationsBody, args), serviceContext(run)),
  },
  decide: {
    title: 'Decision',
    description: 'Answer up to 16 named yes/no (noul), choice and score questions about one state (the /v1/systemone questions).',
    statuses: DECISION_STATUSES,
    schema: (models) => narrowed(DecisionBody, models),
    run: (s, caller, args, run) => s.decision.decide(caller, args, serviceContext(run)),
  },
  batch_create: {
    title: 'Create a batch',
    description: 'Start a batch over an uploaded .jsonl file of purpose batch; its lines are paid as they run.',
    schema: (_models, s) => plainSchema(batchCreateBody(s.batchable())),
    run: async (s, caller, args) => batchWire(await s.batches.create(caller.principal, args)),
  },
  batch_get: {
    title: 'Retrieve a batch',
    description: "A batch of the caller's project: its status, counts and output file.",
    schema: () => plainSchema(BatchIdParams),
    run: async (s, caller, args) => batchWire(await s.batches.retrieve(caller.principal.projectId, batchIdOf(args))),
  },
};
