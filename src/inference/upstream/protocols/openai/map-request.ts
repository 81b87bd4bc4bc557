/** Port parameters → OpenAI wire request bodies, with the upstream's own model name (the deployment's). */
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { ChatParams, CompletionParams, EmbeddingParams, ModerationParams, TaskParams } from '../../../../domain/models/inference-backend.port.js';

function wireMessages(params: ChatParams) {
  return params.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.wireContent !== undefined ? m.wireContent : m.content };
    if (m.name !== undefined) out.name = m.name;
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
    if (m.reasoning !== undefined) out.reasoning_content = m.reasoning;
    return out;
  });
}

/** Never dropped: without them there is no call. */
const KEPT = new Set(['model', 'messages', 'stream']);

/** Removes the model's `drop_params` (fields its engine rejects). */
function withoutDropped(model: ModelSpec, body: Record<string, unknown>): Record<string, unknown> {
  for (const name of model.binding.dropParams) if (!KEPT.has(name)) delete body[name];
  return body;
}

/** `model` is the one being served (a fallback's own `drop_params` apply to it). */
export function chatBody(params: ChatParams, model: ModelSpec, upstreamModel: string, stream: boolean): Record<string, unknown> {
  // Not `{ ...sampling, model, messages }`: on Node 20 a literal that spreads and then adds
  // properties takes V8's slow path, Object.assign does not (sampling holds neither key, so
  // order is moot).
  const body: Record<string, unknown> = Object.assign({ model: upstreamModel, messages: wireMessages(params) }, params.sampling);
  if (Object.keys(params.options).length > 0) body.metadata = params.options;
  if (stream) {
    body.stream = true;
    // Always ask for usage: metering needs it whether or not the client wants to see it.
    body.stream_options = { include_usage: true };
  }
  return withoutDropped(model, body);
}

/** A legacy completion: the client's fields as sent, with the upstream's model name. */
export function completionBody(params: CompletionParams, model: ModelSpec, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = Object.assign({ model: upstreamModel, prompt: params.prompt }, params.fields);
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return withoutDropped(model, body);
}

/**
 * A task model behind an OpenAI-compatible upstream (another Sluice, or the hosted API)
 * answers on chat completions; labels travel as `categories`, options as `metadata`.
 */
export function taskBody(params: TaskParams, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: upstreamModel,
    messages: [{ role: 'user', content: params.input }],
  };
  if (params.labels) body.categories = params.labels;
  if (Object.keys(params.options).length > 0) body.metadata = params.options;
  return body;
}

export function embeddingBody(params: EmbeddingParams, upstreamModel: string): Record<string, unknown> {
  return { model: upstreamModel, input: params.inputs, encoding_format: 'float' };
}

export function moderationBody(params: ModerationParams, upstreamModel: string): Record<string, unknown> {
  return { model: upstreamModel, input: params.inputs };
}
