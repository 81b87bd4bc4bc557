/**
 * Port parameters → a Bedrock Converse request (the same for ConverseStream): system
 * messages as `system` blocks, the conversation as alternating user/assistant messages
 * (tool results travel as `toolResult` blocks of a user turn, tool calls as `toolUse`
 * blocks), images as bytes, sampling as `inferenceConfig`, tools as `toolConfig`,
 * `response_format` and `reasoning_effort` as `outputConfig`. What Converse cannot carry
 * (`n` > 1, `logit_bias`, penalties, logprobs, remote image URLs, …) is refused with a 400
 * naming the field and the provider, or left out when the model's `drop_params` lists it:
 * never silently lost.
 */
import type { ContentBlock, ConverseRequest, Message, SystemContentBlock, Tool, ToolChoice, ToolResultContentBlock } from '@aws-sdk/client-bedrock-runtime';
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { ChatMessage, ChatParams } from '../../../../domain/models/inference-backend.port.js';
import { AppError } from '../../../../domain/shared/errors.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);

/** Fields that change nothing Bedrock does and so are not forwarded (a caller tag, OpenAI's storage and stream options). */
const IGNORED = new Set(['user', 'store', 'metadata', 'stream_options', 'parallel_tool_calls']);

/** A 400 naming what Converse cannot carry. */
export function notExpressible(field: string, why: string): AppError {
  return new AppError('invalid_request', `${field} is not supported by provider bedrock: ${why}`, { code: 'unsupported_parameter', param: field });
}

/** `model` is the one being served: its `drop_params` say which inexpressible fields are left out instead of refused. */
export function converseRequest(params: ChatParams, model: ModelSpec, modelId: string): ConverseRequest {
  const dropped = new Set(model.binding.dropParams);
  const request: ConverseRequest = { modelId, ...conversation(params.messages) };
  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  for (const [field, value] of Object.entries(params.sampling)) {
    if (value === undefined || value === null || IGNORED.has(field)) continue;
    const refusal = applyField(request, inference, field, value);
    if (refusal && !dropped.has(field)) throw refusal;
  }
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;
  if (request.toolConfig === undefined && hasToolBlocks(request.messages ?? [])) {
    // Bedrock refuses toolUse/toolResult blocks without a toolConfig: the conversation's own tools, without schemas.
    request.toolConfig = { tools: toolsOfHistory(params.messages) };
  }
  return request;
}

/** Sets one sampling field on the request; returns the refusal when Converse cannot carry it. */
function applyField(request: ConverseRequest, inference: NonNullable<ConverseRequest['inferenceConfig']>, field: string, value: unknown): AppError | null {
  switch (field) {
    case 'max_tokens':
    case 'max_completion_tokens':
      inference.maxTokens = value as number;
      return null;
    case 'temperature':
      inference.temperature = value as number;
      return null;
    case 'top_p':
      inference.topP = value as number;
      return null;
    case 'stop':
      inference.stopSequences = Array.isArray(value) ? (value as string[]) : [value as string];
      return null;
    case 'n':
      return value === 1 ? null : notExpressible('n', 'Converse answers with one choice');
    case 'tools':
      request.toolConfig = { ...request.toolConfig, tools: toolsOf(value) };
      return null;
    case 'tool_choice':
      return applyToolChoice(request, value);
    case 'response_format':
      return applyResponseFormat(request, value);
    case 'reasoning_effort':
      if (!['low', 'medium', 'high', 'xhigh'].includes(value as string)) return notExpressible('reasoning_effort', 'Converse\'s effort is low, medium, high or xhigh');
      request.outputConfig = { ...request.outputConfig, effort: value as string };
      return null;
    default:
      return notExpressible(field, 'Converse has no such setting');
  }
}

function toolsOf(value: unknown): Tool[] {
  if (!Array.isArray(value)) throw notExpressible('tools', 'expected an array of function tools');
  return value.map((raw, i) => {
    const fn = obj(obj(raw)?.function);
    if (obj(raw)?.type !== 'function' || typeof fn?.name !== 'string') throw notExpressible(`tools[${i}]`, 'only function tools can be carried');
    const spec: Tool.ToolSpecMember['toolSpec'] = { name: fn.name, inputSchema: { json: (obj(fn.parameters) ?? { type: 'object', properties: {} }) as never } };
    if (typeof fn.description === 'string') spec.description = fn.description;
    if (typeof fn.strict === 'boolean') spec.strict = fn.strict;
    return { toolSpec: spec };
  });
}

function applyToolChoice(request: ConverseRequest, value: unknown): AppError | null {
  let choice: ToolChoice;
  if (value === 'auto') choice = { auto: {} };
  else if (value === 'required') choice = { any: {} };
  else if (typeof obj(obj(value)?.function)?.name === 'string') choice = { tool: { name: obj(obj(value)!.function)!.name as string } };
  else return notExpressible('tool_choice', 'Converse chooses auto, any or one named tool; it has no "none"');
  request.toolConfig = { tools: request.toolConfig?.tools ?? [], toolChoice: choice };
  return null;
}

function applyResponseFormat(request: ConverseRequest, value: unknown): AppError | null {
  const format = obj(value);
  if (format?.type === 'text') return null;
  const spec = obj(format?.json_schema);
  if (format?.type !== 'json_schema' || !obj(spec?.schema)) return notExpressible('response_format', 'Converse carries only a json_schema format (no json_object mode)');
  const jsonSchema: { schema: string; name?: string; description?: string } = { schema: JSON.stringify(spec!.schema) };
  if (typeof spec!.name === 'string') jsonSchema.name = spec!.name;
  if (typeof spec!.description === 'string') jsonSchema.description = spec!.description;
  request.outputConfig = { ...request.outputConfig, textFormat: { type: 'json_schema', structure: { jsonSchema } } };
  return null;
}

/** System messages → `system`; the rest → Converse messages, consecutive turns of one role merged (Bedrock wants them alternating). */
function conversation(messages: readonly ChatMessage[]): { system?: SystemContentBlock[]; messages: Message[] } {
  const system: SystemContentBlock[] = [];
  const out: Message[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'system') {
      if (m.content !== '') system.push({ text: m.content });
      return;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks = m.role === 'tool' ? [toolResultBlock(m, i)] : m.role === 'assistant' ? assistantBlocks(m, i) : userBlocks(m, i);
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.content!.push(...blocks);
    else out.push({ role, content: blocks });
  });
  return system.length > 0 ? { system, messages: out } : { messages: out };
}

function toolResultBlock(m: ChatMessage, i: number): ContentBlock {
  if (!m.tool_call_id) throw notExpressible(`messages[${i}].tool_call_id`, 'a tool result needs the id of its call');
  const content: ToolResultContentBlock[] = m.content === '' ? [] : [{ text: m.content }];
  return { toolResult: { toolUseId: m.tool_call_id, content } };
}

function assistantBlocks(m: ChatMessage, i: number): ContentBlock[] {
  const blocks: ContentBlock[] = m.content.trim() === '' ? [] : [{ text: m.content }];
  (m.tool_calls ?? []).forEach((call, j) => {
    const fn = obj(call.function);
    let input: unknown;
    try {
      input = JSON.parse(typeof fn?.arguments === 'string' && fn.arguments !== '' ? fn.arguments : '{}');
    } catch {
      throw notExpressible(`messages[${i}].tool_calls[${j}].function.arguments`, 'Converse carries tool arguments as JSON, and these are not JSON');
    }
    blocks.push({ toolUse: { toolUseId: String(call.id), name: String(fn?.name), input: input as never } });
  });
  return blocks;
}

/** A user message: its text, or its parts (text and images given as data: URLs). */
function userBlocks(m: ChatMessage, i: number): ContentBlock[] {
  if (!Array.isArray(m.wireContent)) return m.content === '' ? [] : [{ text: m.content }];
  return m.wireContent.map((raw, j): ContentBlock => {
    const part = obj(raw);
    if (part?.type === 'text' && typeof part.text === 'string') return { text: part.text };
    if (part?.type === 'image_url') return imageBlock(obj(part.image_url)?.url, `messages[${i}].content[${j}].image_url`);
    throw notExpressible(`messages[${i}].content[${j}].type`, `Converse carries text and images, not ${String(part?.type)}`);
  });
}

const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);

function imageBlock(url: unknown, field: string): ContentBlock {
  const match = typeof url === 'string' ? /^data:image\/(png|jpe?g|gif|webp);base64,(.*)$/s.exec(url) : null;
  if (!match) throw notExpressible(field, 'Converse takes an image\'s bytes: give a data: URL of a png, jpeg, gif or webp image');
  const format = match[1] === 'jpg' ? 'jpeg' : match[1]!;
  if (!IMAGE_FORMATS.has(format)) throw notExpressible(field, `image format ${format}`);
  return { image: { format: format as 'png', source: { bytes: Buffer.from(match[2]!, 'base64') } } };
}

function hasToolBlocks(messages: readonly Message[]): boolean {
  return messages.some((m) => m.content?.some((b) => b.toolUse !== undefined || b.toolResult !== undefined));
}

/** The tools a conversation called, declared without schemas, for a request that sends no `tools` of its own. */
function toolsOfHistory(messages: readonly ChatMessage[]): Tool[] {
  const names = new Set<string>();
  for (const m of messages) for (const call of m.tool_calls ?? []) names.add(String(obj(call.function)?.name));
  return [...names].map((name) => ({ toolSpec: { name, inputSchema: { json: { type: 'object', properties: {} } as never } } }));
}
