/**
 * The Responses service's contract with its callers (the wire's mapper and writer, stored
 * responses, background runs): the request a run takes, its context, and the events it
 * produces.
 */
import type { AffinityHints, CallContext, ChatMessage } from '../models/inference-backend.port.js';
import type { ResponseInputItemIn } from './response-items.types.js';
import type { ResponseSession } from './response-session.js';

type Json = Record<string, unknown>;

/** An input item as a validated body holds it: message, function_call, function_call_output or reasoning. */
export type ResponseInputItem = ResponseInputItemIn;

/** A hosted tool a request named (web_search, file_search, …): dropped or refused, never run. */
export interface HostedTool {
  type: string;
  /** Where it stands in the body (`tools[4].type`), for a refusal. */
  param: string;
}

/** A namespace's function, under the flat name the engine knows it by. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

/** A Responses request as the domain takes it (the wire's mapper builds it from the body: src/wire/responses/mapper.ts). */
export interface ResponsesRequest {
  model: string;
  /** This request's input as chat messages (`instructions` and earlier turns not included). */
  messages: ChatMessage[];
  /** This request's input as sent: a string, or items (what is stored as its input items). */
  input: string | ResponseInputItem[];
  stream: boolean;
  instructions: string | null;
  maxOutputTokens: number | null;
  maxToolCalls: number | null;
  truncation: 'auto' | 'disabled';
  metadata: Json;
  /** The chat fields the engine receives. */
  sampling: Json;
  labels: string[] | null;
  /** What the resource reports of the request's settings (tools, text format, sampling, ...). */
  echo: Json;
  previousResponseId: string | null;
  /** Kept once finished (the default). */
  store: boolean;
  /** Stored queued and run by a worker. */
  background: boolean;
  /** Hosted tools the request named, in order (none reach the engine). */
  hostedTools: HostedTool[];
  /** The engine's flat name of each namespaced function (`multi_agent_v1__spawn_agent`) → its namespace and name. */
  namespaced: ReadonlyMap<string, NamespacedName>;
  /** `include` asked for `reasoning.encrypted_content`: reasoning items carry it, sealed. */
  sealReasoning: boolean;
  /** The body as sent: what a background response is queued with, for its worker to map again. */
  body: Json;
  /**
   * `false`: a warm-up (OpenAI's WebSocket mode, `generate: false`): nothing is generated or
   * billed; the response completes at once with no output, and a later request may continue it.
   */
  generate?: boolean;
  /** The session the request belongs to (its `prompt_cache_key`, `user`, session header), for session affinity. */
  affinity?: AffinityHints;
}

/** One server-sent event of a streamed response (`type`, `sequence_number`, and the event's own fields). */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

export interface ResponsesContext extends CallContext {
  /** Where the call came from, for usage records ("/v1/responses", "batch"). */
  route?: string;
  /** The response's id; generated once at the start when absent (the streamed and the stored id agree). */
  responseId?: string;
  /** Earlier conversation items, put before this request's input (after `instructions`). */
  priorItems?: ResponseInputItem[];
  /** The connection the request came on, when it keeps its responses (a WebSocket): see response-session.ts. */
  session?: ResponseSession;
  /** Called once with the final resource, whatever the outcome (completed, incomplete, failed or cancelled). */
  onSettled?: (resource: Record<string, unknown>) => Promise<void>;
}
