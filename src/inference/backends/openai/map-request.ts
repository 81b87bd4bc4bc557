/** Port parameters → OpenAI wire request bodies, with the upstream's own model name (the deployment's). */
import type { ChatParams, EmbeddingParams, ModerationParams, TaskParams } from '../../../domain/models/inference-backend.port.js';

function wireMessages(params: ChatParams) {
  return params.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.name !== undefined) out.name = m.name;
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    return out;
  });
}

export function chatBody(params: ChatParams, upstreamModel: string, stream: boolean): Record<string, unknown> {
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
  return body;
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
