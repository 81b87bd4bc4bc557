/**
 * The Responses object: every field of Open Responses' ResponseResource, in the order the
 * spec lists its own fields, then the others. What the request set is fixed at the start
 * (the head); status, output, error and usage change as the run goes.
 */
import type { TokenUsage } from '../../domain/models/inference-backend.port.js';
import { randomString } from '../../domain/shared/ids.js';
import type { NamespacedName, ResponsesRequest } from '../../domain/responses/responses.types.js';

type Json = Record<string, unknown>;

export const hexId = (prefix: string): string => `${prefix}${randomString(24, 'hex')}`;

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** What the resource reports of its request; never throws on a validated body. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  model: string;
  instructions: string | null;
  maxOutputTokens: number | null;
  maxToolCalls: number | null;
  truncation: 'auto' | 'disabled';
  metadata: Json;
  previousResponseId: string | null;
  echo: Json;
  /** The engine's flat name of each namespaced function → its namespace and name. */
  namespaced: ReadonlyMap<string, NamespacedName>;
}

export function headOf(request: ResponsesRequest, id: string, createdAt: number): ResponseHead {
  return {
    id,
    createdAt,
    model: request.model,
    instructions: request.instructions,
    maxOutputTokens: request.maxOutputTokens,
    maxToolCalls: request.maxToolCalls,
    truncation: request.truncation,
    metadata: request.metadata,
    previousResponseId: request.previousResponseId,
    echo: request.echo,
    namespaced: request.namespaced,
  };
}

export interface ResponseState {
  status: ResponseStatus;
  /** The model that served (a fallback's id), once known. */
  model?: string;
  output: Json[];
  completedAt?: number | null;
  error?: { message: string; type: string; param: string | null; code: string | null } | null;
  incompleteReason?: string | null;
  usage?: TokenUsage | null;
  /** The cap the call ran with, when the meter lowered it (a request that set none). */
  outputCap?: number;
}

export function usageWire(usage: TokenUsage): Json {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

export function responseResource(head: ResponseHead, state: ResponseState): Json {
  const { echo } = head;
  return {
    id: head.id,
    object: 'response',
    created_at: head.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: head.instructions,
    max_output_tokens: state.outputCap ?? head.maxOutputTokens,
    model: state.model ?? head.model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: head.previousResponseId,
    reasoning: echo.reasoning,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: head.truncation,
    usage: state.usage ? usageWire(state.usage) : null,
    user: echo.user,
    metadata: head.metadata,
    background: false,
    conversation: null,
    frequency_penalty: echo.frequency_penalty,
    presence_penalty: echo.presence_penalty,
    top_logprobs: echo.top_logprobs,
    max_tool_calls: head.maxToolCalls,
    service_tier: echo.service_tier,
    safety_identifier: echo.safety_identifier,
    prompt_cache_key: echo.prompt_cache_key,
  };
}
