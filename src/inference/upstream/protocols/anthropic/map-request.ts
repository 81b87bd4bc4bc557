/**
 * A chat call (OpenAI's fields, as every wire hands them to the port) → an Anthropic
 * Messages request body (https://docs.anthropic.com/en/api/messages): system messages to
 * `system`, tool results to `tool_result` blocks in the next user turn, assistant tool
 * calls to `tool_use` blocks, image parts to `image` blocks (base64 or url source), and
 * the sampling fields Messages has under its own names. A field Messages cannot carry is
 * refused with 400 naming it and the provider, or dropped when the model has
 * `drop_params: true` (unsupported.ts): never silently lost.
 */
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { ChatMessage, ChatParams } from '../../../../domain/models/inference-backend.port.js';
import { mapSampling } from './sampling.js';
import { SamplingRefusals, type Unsupported } from './unsupported.js';

type Json = Record<string, unknown>;
type Block = Json;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);

/** `data:image/png;base64,…` → a base64 source; any other URL → a url source. */
function imageBlock(url: string): Block {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match) return { type: 'image', source: { type: 'base64', media_type: match[1], data: match[2] } };
  return { type: 'image', source: { type: 'url', url } };
}

/** A user message's content parts as Messages blocks; a part Messages has no block for is refused. */
function userBlocks(message: ChatMessage, unsupported: Unsupported): Block[] {
  const parts = Array.isArray(message.wireContent) ? (message.wireContent as unknown[]) : null;
  if (!parts) return message.content === '' ? [] : [{ type: 'text', text: message.content }];
  const blocks: Block[] = [];
  for (const raw of parts) {
    const part = obj(raw);
    let block: Block | null = null;
    if (part?.type === 'text' && typeof part.text === 'string') block = { type: 'text', text: part.text };
    else if (part?.type === 'image_url') {
      const url = obj(part.image_url)?.url ?? part.image_url;
      if (typeof url === 'string') block = imageBlock(url);
    } else unsupported.refuse(`messages[].content[].type ${String(part?.type)}`, false);
    if (!block) continue;
    // A part's `cache_control` (the extension OpenAI-format clients use for Anthropic's prompt cache) is kept on its block.
    if (obj(part?.cache_control)) block.cache_control = part!.cache_control;
    blocks.push(block);
  }
  return blocks;
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    // Messages takes the input as an object: arguments that are not JSON travel as a string field.
    return { arguments: text };
  }
}

/**
 * An assistant turn: the provider's signed thinking blocks it carries (as sent, first, as
 * Messages wants them), its text, then its tool calls as `tool_use` blocks. Unsigned
 * `reasoning` is not sent: Messages takes thinking back only as a signed block.
 */
function assistantBlocks(message: ChatMessage): Block[] {
  const blocks: Block[] = (message.thinking ?? []).map((block) => ({ ...block }));
  if (message.content !== '') blocks.push({ type: 'text', text: message.content });
  for (const call of message.tool_calls ?? []) {
    const fn = obj(call.function);
    blocks.push({ type: 'tool_use', id: call.id, name: fn?.name, input: parseArguments(fn?.arguments) });
  }
  return blocks;
}

/** A tool message → a `tool_result` block (its text, or its image and text parts). */
function toolResultBlock(message: ChatMessage, unsupported: Unsupported): Block {
  const parts = Array.isArray(message.wireContent) ? userBlocks(message, unsupported) : null;
  return { type: 'tool_result', tool_use_id: message.tool_call_id, content: parts ?? message.content };
}

/**
 * System messages → `system` (their text, or text blocks when a part or a carried block
 * has a `cache_control`); the rest → alternating turns (tool results join the user turn that
 * follows the tool calls).
 */
export function mapMessages(messages: readonly ChatMessage[], unsupported: Unsupported): { system: string | Block[] | null; messages: Json[] } {
  const system: Block[] = [];
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    // An empty turn (null content and no tool calls) says nothing, and Messages refuses empty content.
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system') system.push(...(m.cachedBlocks ? m.cachedBlocks.map((block) => ({ ...block })) : userBlocks(m, unsupported)));
    else if (m.role === 'assistant') push('assistant', assistantBlocks(m));
    else if (m.role === 'tool') push('user', [toolResultBlock(m, unsupported)]);
    else push('user', userBlocks(m, unsupported));
  }
  const cached = system.some((b) => b.cache_control !== undefined);
  const text = system.map((b) => b.text).join('\n\n');
  return { system: cached ? system : system.length > 0 ? text : null, messages: out };
}

/** The Messages body of one chat call on the model (its `drop_params` apply), `stream` or not. */
export function messagesBody(params: ChatParams, model: ModelSpec, upstreamModel: string, provider: string, stream: boolean): Json {
  const sampling: Json = Object.assign({}, params.sampling);
  for (const name of model.binding.dropParams) delete sampling[name];
  const unsupported = new SamplingRefusals(model, provider);
  const { system, messages } = mapMessages(params.messages, unsupported);
  const body: Json = { model: upstreamModel, messages };
  if (system !== null) body.system = system;
  mapSampling(sampling, body, model, unsupported);
  // A Messages client's own thinking setting, unless the chat fields asked for it (reasoning_effort, thinking).
  if (params.thinking && body.thinking === undefined) body.thinking = params.thinking;
  if (stream) body.stream = true;
  return body;
}
