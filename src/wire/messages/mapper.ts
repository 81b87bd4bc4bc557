/**
 * A validated Messages body (body.ts) → the conversation the domain's one chat call runs,
 * on the chat path every engine speaks (upstream engines and the in-process runtimes):
 *
 * - `system` (a string or text blocks) becomes the leading system message (the chat call
 *   removes Claude Code's per-request billing line from it, domain/completions/prompt-hygiene.ts),
 *   its blocks kept beside the text when one has a `cache_control`;
 * - a user message's tool_result blocks become tool messages (each must answer a tool_use
 *   of the assistant message before it), its images image parts, its documents file or
 *   text parts, its text the message's text;
 * - an assistant message's tool_use blocks become its tool calls; a thinking block Sluice
 *   signed (an engine's reasoning, thinking-signature.ts) is left out; one signed by
 *   someone else, and a redacted_thinking block, ride on the message as sent
 *   (`ChatMessage.thinking`), for an anthropic-protocol upstream to receive unchanged;
 *   the service refuses a foreign signature when the model is served otherwise;
 * - a `system` message in `messages` (text only) becomes a system message where it stands;
 * - custom tools become function tools; a server tool no engine here runs is dropped (its
 *   name reported) or refused, as the caller says; tool_choice and
 *   disable_parallel_tool_use map onto chat's tool_choice and parallel_tool_calls;
 * - tool search, as Anthropic's reference has it: a tool with `defer_loading: true` is
 *   offered to the engine only once a `tool_reference` block (in a tool result, a tool
 *   search's answer) names it; a tool_reference reaches the engine as the text
 *   `Tool loaded: <name>`, and one naming no tool of the request is refused;
 * - `thinking` is carried for an anthropic-protocol upstream (others leave it out);
 * - stop_sequences, temperature, top_p and top_k are carried,
 *   output_config.format as the engine's structured output (response_format json_schema);
 *   max_tokens is held at the cap the caller gives (the model's own output limit);
 * - metadata.user_id is never sent to the engine (Claude Code's holds its device id): it is
 *   the session-affinity hint `user` (affinity-hints.ts), beside the session header.
 */
import { invalidRequest } from '../../domain/shared/errors.js';
import { affinityOf } from '../affinity-hints.js';
import type { CachedTextBlock, ChatMessage, ThinkingBlock } from '../../domain/models/inference-backend.port.js';
import type { ChatRequest } from '../../domain/completions/chat-request.js';
import type { ContentBlockIn, MessageParamIn, OutputConfigIn, TextBlockIn, ToolChoiceIn, ToolIn } from './body.js';
import type { ThinkingSigner } from './thinking-signature.js';

type Json = Record<string, unknown>;

/** What becomes of a server tool (`web_search_*`, `code_execution_*`, …) that no engine here runs. */
export type ServerToolPolicy = 'drop' | 'refuse';

export interface MessagesMapping {
  serverTools: ServerToolPolicy;
  signer: ThinkingSigner;
}

/** The system prompt's text: a string, or its text blocks joined with newlines. */
export const systemTextOf = (system: string | TextBlockIn[] | null | undefined): string =>
  typeof system === 'string' ? system : (system ?? []).map((block) => block.text).join('\n');

const isServerTool = (tool: ToolIn): boolean => typeof tool.type === 'string' && tool.type !== 'custom';

/** The tools a `tool_reference` block in the conversation names (a tool search loaded them), checked against the request's tools. */
export function referencedTools(messages: readonly MessageParamIn[], tools: readonly ToolIn[] | null | undefined): Set<string> {
  const names = new Set((tools ?? []).map((tool) => tool.name));
  const referenced = new Set<string>();
  for (const [i, message] of messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [j, block] of message.content.entries()) {
      if (block.type !== 'tool_result' || !Array.isArray(block.content)) continue;
      for (const [k, inner] of block.content.entries()) {
        if (inner.type !== 'tool_reference') continue;
        const param = `messages[${i}].content[${j}].content[${k}].tool_name`;
        if (!names.has(inner.tool_name)) throw invalidRequest(`${param}: the tool_reference names ${inner.tool_name}, which is not in tools`, param);
        referenced.add(inner.tool_name);
      }
    }
  }
  return referenced;
}

/**
 * Custom tools as chat's function tools (a deferred one only when `referenced` names it),
 * and the names of the server tools dropped.
 */
export function toolsOf(tools: readonly ToolIn[] | null | undefined, policy: ServerToolPolicy, referenced: ReadonlySet<string>): { tools: Json[]; dropped: string[] } {
  const out: Json[] = [];
  const dropped: string[] = [];
  for (const [i, tool] of (tools ?? []).entries()) {
    if (tool.defer_loading === true && !referenced.has(tool.name)) continue;
    if (isServerTool(tool)) {
      if (policy === 'refuse') throw invalidRequest(`tools[${i}]: the server tool ${tool.name} (${tool.type}) is not available here; only custom tools with input_schema are`, `tools[${i}].type`);
      dropped.push(tool.name);
      continue;
    }
    const fn: Json = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') fn.description = tool.description;
    out.push({ type: 'function', function: fn });
  }
  return { tools: out, dropped };
}

const toolChoiceOf = (choice: ToolChoiceIn): unknown => {
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool') return { type: 'function', function: { name: choice.name } };
  return choice.type;
};

const imagePart = (source: Extract<ContentBlockIn, { type: 'image' }>['source']): Json => ({
  type: 'image_url',
  image_url: { url: source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url },
});

/** A document as a part: a PDF as a file part, text (and content blocks' text) as a text part, a url as a file part naming it. */
function documentPart(block: Extract<ContentBlockIn, { type: 'document' }>): Json {
  const { source } = block;
  const heading = [block.title, block.context].filter((s): s is string => typeof s === 'string' && s !== '').join('\n');
  const withHeading = (text: string) => ({ type: 'text', text: heading === '' ? text : `${heading}\n${text}` });
  if (source.type === 'base64') return { type: 'file', file: { filename: block.title ?? 'document.pdf', file_data: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'text') return withHeading(source.data);
  if (source.type === 'url') return { type: 'file', file: { file_url: source.url } };
  return withHeading(typeof source.content === 'string' ? source.content : textOf(source.content));
}

/** The text of blocks: their text blocks (text documents, tool references) joined with newlines. */
function textOf(blocks: readonly ContentBlockIn[]): string {
  const texts: string[] = [];
  for (const block of blocks) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'document' && block.source.type === 'text') texts.push(block.source.data);
    else if (block.type === 'tool_reference') texts.push(`Tool loaded: ${block.tool_name}`);
  }
  return texts.join('\n');
}

/** Parts as a chat message: text alone is its content; with images, files or a `cache_control`, the parts are carried as sent. */
function userMessage(parts: Json[]): ChatMessage {
  const text = parts.filter((p) => p.type === 'text').map((p) => p.text as string).join('\n');
  const message: ChatMessage = { role: 'user', content: text };
  if (parts.some((p) => p.type !== 'text' || p.cache_control !== undefined)) message.wireContent = parts;
  return message;
}

/** A text block as a chat text part, its `cache_control` kept (an engine with a prompt cache, the anthropic protocol, reads it). */
const textPart = (block: { text: string; cache_control?: Json | null }): Json =>
  block.cache_control ? { type: 'text', text: block.text, cache_control: block.cache_control } : { type: 'text', text: block.text };

/** A user message's blocks: tool results first (as tool messages, answering the tool_use ids open), then the rest as one user message. */
function userTurn(blocks: readonly ContentBlockIn[], param: string, openToolUses: ReadonlySet<string>, out: ChatMessage[]): void {
  const parts: Json[] = [];
  for (const [j, block] of blocks.entries()) {
    if (block.type === 'tool_result') {
      if (!openToolUses.has(block.tool_use_id)) {
        throw invalidRequest(
          `${param}[${j}].tool_use_id: unexpected tool_use_id found in tool_result blocks: ${block.tool_use_id}. Each tool_result block must have a corresponding tool_use block in the previous message.`,
          `${param}[${j}].tool_use_id`,
        );
      }
      const content = block.content ?? '';
      const text = typeof content === 'string' ? content : textOf(content);
      out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error === true ? `Error: ${text}` : text });
      // Images in a tool result reach the model beside it, in the user message that follows.
      if (Array.isArray(content)) for (const inner of content) if (inner.type === 'image') parts.push(imagePart(inner.source));
    } else if (block.type === 'text') parts.push(textPart(block));
    else if (block.type === 'image') parts.push(imagePart(block.source));
    else if (block.type === 'document') parts.push(documentPart(block));
    else if (block.type !== 'thinking' && block.type !== 'redacted_thinking') {
      throw invalidRequest(`${param}[${j}].type: ${block.type} blocks may only be sent in assistant messages`, `${param}[${j}].type`);
    }
  }
  if (parts.length > 0) out.push(userMessage(parts));
}

/** The refusal of a thinking block whose signature is not Sluice's, on a model no anthropic-protocol upstream serves. */
export const foreignSignature = (param: string) => invalidRequest(`${param}: Invalid \`signature\` in \`thinking\` block`, param);

/** The conversation's messages, and the params of the thinking blocks signed by someone other than Sluice. */
export interface Conversation {
  messages: ChatMessage[];
  foreignSignatures: string[];
}

/** An assistant message's blocks: its text, its tool calls, the thinking it carries (Sluice's own left out). Returns the tool_use ids it opened. */
function assistantTurn(blocks: readonly ContentBlockIn[], param: string, signer: ThinkingSigner, out: Conversation): Set<string> {
  const texts: string[] = [];
  const calls: Json[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const [j, block] of blocks.entries()) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use') calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } });
    else if (block.type === 'thinking') {
      if (signer.verifies(block.thinking, block.signature)) continue;
      thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
      out.foreignSignatures.push(`${param}[${j}].signature`);
    } else if (block.type === 'redacted_thinking') thinking.push({ type: 'redacted_thinking', data: block.data });
    else throw invalidRequest(`${param}[${j}].type: ${block.type} blocks may only be sent in user messages`, `${param}[${j}].type`);
  }
  const text = texts.join('\n');
  if (calls.length === 0 && text === '' && thinking.length === 0) return new Set();
  const message: ChatMessage = { role: 'assistant', content: text };
  if (thinking.length > 0) message.thinking = thinking;
  if (calls.length > 0) {
    message.tool_calls = calls;
    if (text === '') message.wireContent = null;
  }
  out.messages.push(message);
  return new Set(calls.map((call) => call.id as string));
}

const cachedBlockOf = (block: TextBlockIn): CachedTextBlock =>
  block.cache_control ? { type: 'text', text: block.text, cache_control: block.cache_control } : { type: 'text', text: block.text };

/** The system prompt as a message: its text, with its blocks carried beside it when one has a `cache_control` (for an anthropic-protocol upstream). */
function systemMessage(system: string | TextBlockIn[] | null | undefined): ChatMessage | null {
  const content = systemTextOf(system);
  if (content === '') return null;
  const message: ChatMessage = { role: 'system', content };
  if (Array.isArray(system) && system.some((block) => block.cache_control)) message.cachedBlocks = system.map(cachedBlockOf);
  return message;
}

/** A `system` message's text: a string, or its text blocks joined with newlines (any other block is refused). */
function systemMessageText(content: string | readonly ContentBlockIn[], param: string): string {
  if (typeof content === 'string') return content;
  for (const [j, block] of content.entries()) {
    if (block.type !== 'text') throw invalidRequest(`${param}[${j}].type: a system message carries text blocks only, not ${block.type}`, `${param}[${j}].type`);
  }
  return textOf(content);
}

/** The conversation as chat messages: the system prompt first, then each turn. */
export function messagesConversationOf(system: string | TextBlockIn[] | null | undefined, messages: readonly MessageParamIn[], signer: ThinkingSigner): Conversation {
  const out: Conversation = { messages: [], foreignSignatures: [] };
  const systemPrompt = systemMessage(system);
  if (systemPrompt) out.messages.push(systemPrompt);
  let openToolUses: ReadonlySet<string> = new Set();
  for (const [i, message] of messages.entries()) {
    const param = `messages[${i}].content`;
    // A system message leaves the tool uses open: their results may follow it.
    if (message.role === 'system') out.messages.push({ role: 'system', content: systemMessageText(message.content, param) });
    else if (typeof message.content === 'string') {
      out.messages.push({ role: message.role, content: message.content });
      openToolUses = new Set();
    } else if (message.role === 'assistant') openToolUses = assistantTurn(message.content, param, signer, out);
    else {
      userTurn(message.content, param, openToolUses, out.messages);
      openToolUses = new Set();
    }
  }
  return out;
}

export interface MessagesCall {
  request: ChatRequest;
  /** The chat tools the engine receives (what count_tokens and the first usage count too). */
  tools: Json[];
  /** Server tools left out (named in a response header). */
  dropped: string[];
  stopSequences: readonly string[];
  /** The params of thinking blocks signed by someone other than Sluice (refused unless an anthropic-protocol upstream serves). */
  foreignSignatures: string[];
}

/** What an engine reads of the Messages body beyond the conversation. */
interface SamplingIn {
  model: string;
  max_tokens?: number;
  stream?: boolean | null;
  stop_sequences?: string[] | null;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  metadata?: { user_id?: string | null } | null;
  system?: string | TextBlockIn[] | null;
  messages: MessageParamIn[];
  tools?: ToolIn[] | null;
  tool_choice?: ToolChoiceIn | null;
  output_config?: OutputConfigIn | null;
  thinking?: object | null;
}

/**
 * The body as the chat call: `outputCap` is max_tokens held at the model's own limit;
 * `session` the coding agent's session id from the request's header (affinity-hints.ts).
 */
export function messagesCallOf(body: SamplingIn, mapping: MessagesMapping, outputCap: number | undefined, session?: string): MessagesCall {
  const { tools, dropped } = toolsOf(body.tools, mapping.serverTools, referencedTools(body.messages, body.tools));
  const sampling: Json = {};
  if (outputCap !== undefined) sampling.max_tokens = outputCap;
  for (const field of ['temperature', 'top_p', 'top_k'] as const) if (typeof body[field] === 'number') sampling[field] = body[field];
  const stopSequences = body.stop_sequences ?? [];
  if (stopSequences.length > 0) sampling.stop = stopSequences;
  const format = body.output_config?.format;
  if (format) sampling.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  if (tools.length > 0) {
    sampling.tools = tools;
    if (body.tool_choice) sampling.tool_choice = toolChoiceOf(body.tool_choice);
    if (body.tool_choice?.disable_parallel_tool_use === true) sampling.parallel_tool_calls = false;
  }
  const conversation = messagesConversationOf(body.system, body.messages, mapping.signer);
  const request: ChatRequest = {
    model: body.model,
    messages: conversation.messages,
    stream: body.stream === true,
    includeUsage: false,
    options: {},
    sampling,
    labels: null,
  };
  if (body.thinking) request.thinking = body.thinking as Json;
  const affinity = affinityOf({ user: body.metadata?.user_id }, session);
  if (affinity) request.affinity = affinity;
  return { request, tools, dropped, stopSequences, foreignSignatures: conversation.foreignSignatures };
}
