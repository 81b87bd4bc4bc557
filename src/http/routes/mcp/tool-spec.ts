/**
 * What a tool is made of (its input schema over the ready models, and what it runs on
 * behalf of a caller), the services the tools call, and the helpers that derive a tool's
 * input schema from a REST body's TypeBox definition.
 */
import type { FastifyRequest } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { CallStory } from '../../../domain/request-log/call-story.js';
import type { Caller } from '../../../domain/identity/caller.js';
import type { ChatCompletionsPort } from '../../../wire/chat-completions/service.js';
import type { DecisionService } from '../../../domain/decision/decision.service.js';
import type { BatchesService } from '../../../domain/batches/batches.service.js';
import type { FilesService } from '../../../domain/files/files.service.js';
import type { TranscriptionService } from '../../../domain/audio/transcription.service.js';
import type { McpPayments } from '../../../domain/mcp/paid-calls.js';
import type { ToolOffer } from '../../../domain/mcp/tool-catalogue.js';
import type { EmbeddingsRequestBody } from '../../../wire/embeddings/body.js';
import type { ModerationsRequestBody } from '../../../wire/moderations/body.js';
import { WORDING_KEYWORD } from '../../../wire/wording.js';
import type { StatusOverrides } from '../../errors.js';

/** A service that takes a validated body on behalf of a caller, as the REST routes call it. */
interface BodyService<Body> {
  create(caller: Caller, body: Body, context: { requestId: string; signal: AbortSignal; route?: string; tags?: readonly string[]; story?: CallStory }): Promise<unknown>;
}

/** Exactly the services the MCP tools call. */
export interface McpToolServices {
  chat: ChatCompletionsPort;
  embeddings: BodyService<EmbeddingsRequestBody>;
  moderations: BodyService<ModerationsRequestBody>;
  transcription: Pick<TranscriptionService, 'run'>;
  decision: Pick<DecisionService, 'decide'>;
  batches: Pick<BatchesService, 'create' | 'retrieve'>;
  /** The urls a batch can name (`batch_create`'s `endpoint`). */
  batchable(): readonly string[];
  /** A project's files (`transcribe` reads audio by file id). */
  files: Pick<FilesService, 'openContent'>;
}

/** What one tool call runs with: the admitted caller (null when the request presented no credential). */
export interface ToolCall {
  /** The tool a `tools/call` names (undefined for other messages). */
  toolName?: string | undefined;
  /** The HTTP request the call came on (its id, session header and credentials, for the request log). */
  request: FastifyRequest;
  caller: Caller | null;
  /** Per-call payment for callers with no credential; null when the storefront takes no per-call payment. */
  payments: McpPayments | null;
  requestId: string;
  signal: AbortSignal;
  /** The call's tags (the `x-sluice-tags` header's and the key's defaults), recorded on its usage. */
  tags?: readonly string[];
  /** Reports a fault that is not an AppError (answered as an opaque internal error). */
  onFault(err: unknown): void;
}

/** What a tool's runner is given besides the caller and the arguments. */
export interface RunContext {
  call: ToolCall;
  /** The usage record's route (`mcp/<tool>`). */
  route: string;
  /** The tool's offer: its ready models and their tasks. */
  offer: ToolOffer;
  /** The call's story for the request log, once a caller runs a tool that calls a model. */
  story?: CallStory;
}

export type Runner = (services: McpToolServices, caller: Caller, args: Record<string, unknown>, run: RunContext) => Promise<unknown>;

export interface ToolSpec {
  title: string;
  description: string;
  /** The REST route's own statuses, where they differ from the default table. */
  statuses?: StatusOverrides;
  /** The input schema, given the tool's ready models and the services (read when the tools are first listed). */
  schema: (models: readonly string[], services: McpToolServices) => Record<string, unknown>;
  run: Runner;
  /** How the service's answer becomes the tool's structured content (default: the REST answer as is). */
  answer?: (value: unknown) => Record<string, unknown>;
}

/** The JSON of a TypeBox schema without the wording annotations (they are the server's own). */
export function plainSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === WORDING_KEYWORD ? undefined : value))) as Record<string, unknown>;
}

/** `schema` with only `fields`, its `model` limited to the ready models. */
export function narrowed(schema: TSchema, models: readonly string[], fields?: readonly string[]): Record<string, unknown> {
  const plain = plainSchema(schema);
  const properties = plain.properties as Record<string, Record<string, unknown>>;
  const kept = fields ? Object.fromEntries(fields.map((f) => [f, properties[f]!])) : { ...properties };
  if (kept.model) kept.model = { ...kept.model, enum: [...models] };
  const required = (plain.required as string[] | undefined)?.filter((r) => r in kept);
  return { ...plain, properties: kept, ...(required ? { required } : {}) };
}

export const field = (args: Record<string, unknown>, name: string): unknown => (Object.hasOwn(args, name) ? args[name] : undefined);

export const pick = (args: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> => {
  const picked: Record<string, unknown> = {};
  for (const name of fields) if (Object.hasOwn(args, name)) picked[name] = args[name];
  return picked;
};

/** The service context of a tool call. */
export const serviceContext = ({ call, route, story }: RunContext) => ({
  requestId: call.requestId,
  signal: call.signal,
  route,
  ...(call.tags ? { tags: call.tags } : {}),
  ...(story ? { story } : {}),
});
