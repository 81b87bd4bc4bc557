/**
 * A validated Responses body (src/wire/responses.ts) → the ResponsesRequest the service
 * runs. `input` is a string or a list of messages; `instructions` becomes a leading
 * system message (and, for zero-shot models, holds the candidate labels).
 */
import type { ChatMessage } from '../models/inference-backend.port.js';
import type { ResponsesRequestBody } from '../../wire/responses.js';
import { messageOf, samplingOf } from './chat-request.js';

export interface ResponsesRequest {
  model: string;
  messages: ChatMessage[];
  instructions: string | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  truncation: 'auto' | 'disabled';
  store: boolean;
  parallelToolCalls: boolean;
  reasoningEffort: string | null;
  user: string | null;
  metadata: Record<string, unknown>;
  sampling: Record<string, unknown>;
  labels: string[] | null;
}

function inputMessages(input: ResponsesRequestBody['input']): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return input.map((item, i) => messageOf(item, `input[${i}]`));
}

export function responsesRequestOf(body: ResponsesRequestBody): ResponsesRequest {
  const messages = inputMessages(body.input);
  const instructions = body.instructions ?? null;
  const maxOutputTokens = body.max_output_tokens ?? body.max_tokens ?? null;
  const reasoningEffort = body.reasoning?.effort ?? null;
  return {
    model: body.model,
    messages: instructions ? [{ role: 'system', content: instructions }, ...messages] : messages,
    instructions,
    maxOutputTokens,
    temperature: body.temperature ?? null,
    topP: body.top_p ?? null,
    truncation: body.truncation ?? 'auto',
    store: body.store ?? true,
    parallelToolCalls: body.parallel_tool_calls ?? true,
    reasoningEffort,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
    sampling: samplingOf({ temperature: body.temperature, top_p: body.top_p, max_tokens: maxOutputTokens, reasoning_effort: reasoningEffort }),
    labels: body.categories?.map((label) => label.trim()) ?? null,
  };
}
