/**
 * A validated Responses body (src/wire/responses/body.ts) → the ResponsesRequest the domain
 * runs: this request's input as chat messages (the domain puts `instructions` and earlier
 * turns before them), the chat fields the engine reads (tools, tool_choice,
 * response_format, sampling), and what the resource echoes. Fields the Responses API has
 * and chat does not are Sluice's; every other field is carried to the engine unchanged.
 */
import { messagesOfItems } from '../../domain/responses/input-items.js';
import type { ResponseInputItem, ResponsesRequest } from '../../domain/responses/responses.types.js';
import { affinityOf } from '../affinity-hints.js';
import type { ResponsesRequestBody, TextFormatIn, ToolChoiceIn } from './body.js';
import { toolPlanOf, type ToolPlan } from './tool-plan.js';

type Json = Record<string, unknown>;

/** Read by Sluice (or meaningless to a chat engine): never carried as sent. */
const OWNED: ReadonlySet<string> = new Set([
  'model', 'input', 'stream', 'stream_options', 'previous_response_id', 'background', 'conversation', 'tools', 'tool_choice',
  'max_tool_calls', 'text', 'instructions', 'max_output_tokens', 'max_tokens', 'truncation', 'reasoning', 'top_logprobs',
  'include', 'store', 'metadata', 'categories', 'prompt', 'prompt_cache_retention', 'client_metadata', '__proto__',
]);

const chatToolChoice = (choice: ToolChoiceIn): unknown =>
  typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };

function chatResponseFormat(format: TextFormatIn): Json | null {
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') return null;
  const schema: Json = { name: format.name, schema: format.schema };
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  if (typeof format.description === 'string') schema.description = format.description;
  return { type: 'json_schema', json_schema: schema };
}

const echoedFormat = (format: TextFormatIn | null | undefined): Json => {
  if (!format?.type || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', name: format.name, schema: format.schema, strict: format.strict ?? null, description: format.description ?? null };
};

/** The fields Sluice does not read, as sent (null is "not sent"). */
function carriedOf(body: Readonly<Json>): Json {
  const carried: Json = {};
  for (const name of Object.keys(body)) {
    const value = body[name];
    if (value !== undefined && value !== null && !OWNED.has(name)) carried[name] = value;
  }
  return carried;
}

/** The chat fields the engine receives: those carried, and the Responses fields translated. */
function samplingOf(body: ResponsesRequestBody, maxOutputTokens: number | null, tools: ToolPlan): Json {
  const sampling = carriedOf(body);
  if (maxOutputTokens !== null) sampling.max_tokens = maxOutputTokens;
  if (body.reasoning?.effort) sampling.reasoning_effort = body.reasoning.effort;
  if (tools.chat.length > 0) sampling.tools = tools.chat;
  else delete sampling.parallel_tool_calls;
  if (body.tool_choice && tools.chat.length > 0) sampling.tool_choice = chatToolChoice(body.tool_choice);
  const format = body.text?.format ? chatResponseFormat(body.text.format) : null;
  if (format) sampling.response_format = format;
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) {
    sampling.logprobs = true;
    sampling.top_logprobs = body.top_logprobs;
  } else if (body.include?.includes('message.output_text.logprobs')) {
    sampling.logprobs = true;
  }
  return sampling;
}

/** What the resource reports of the request's settings. */
function echoOf(body: ResponsesRequestBody, tools: ToolPlan): Json {
  const text: Json = { format: echoedFormat(body.text?.format) };
  if (body.text?.verbosity) text.verbosity = body.text.verbosity;
  return {
    tools: tools.echo,
    tool_choice: body.tool_choice ?? 'auto',
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    text,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    presence_penalty: body.presence_penalty ?? 0,
    frequency_penalty: body.frequency_penalty ?? 0,
    top_logprobs: body.top_logprobs ?? 0,
    service_tier: body.service_tier ?? 'default',
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    user: body.user ?? null,
  };
}

/** `session`: the coding agent's session id from the request's header (affinity-hints.ts). */
export function responsesRequestOf(body: ResponsesRequestBody, session?: string): ResponsesRequest {
  const input: ResponseInputItem[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const maxOutputTokens = body.max_output_tokens ?? body.max_tokens ?? null;
  const tools = toolPlanOf(body.tools);
  const request: ResponsesRequest = {
    model: body.model,
    messages: messagesOfItems(input, 'input'),
    input: body.input,
    stream: body.stream ?? false,
    instructions: body.instructions ?? null,
    maxOutputTokens,
    maxToolCalls: body.max_tool_calls ?? null,
    truncation: body.truncation ?? 'auto',
    metadata: body.metadata ?? {},
    sampling: samplingOf(body, maxOutputTokens, tools),
    labels: body.categories?.map((label) => label.trim()) ?? null,
    echo: echoOf(body, tools),
    previousResponseId: (body.previous_response_id as string | null | undefined) ?? null,
    store: body.store !== false,
    background: body.background === true,
    hostedTools: tools.hosted,
    namespaced: tools.namespaced,
    sealReasoning: body.include?.includes('reasoning.encrypted_content') === true,
    body,
  };
  const affinity = affinityOf(body, session);
  if (affinity) request.affinity = affinity;
  return request;
}
