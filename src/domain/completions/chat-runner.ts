/**
 * The model-facing half of chat completions and responses: decides whether a request is
 * a conversation (chat models) or one text in / one result out (classification,
 * extraction, summarization), enforces the context limit before anything runs, and calls
 * the backend. Quota and metering stay with the services that call it.
 */
import type { ModelSpec } from '../models/model-spec.types.js';
import { AppError, invalidRequest } from '../shared/errors.js';
import type { AffinityHints, CallContext, CarriedAnswer, ChatMessage, ChatParams, ChatStreamEvent, InferenceBackend, TokenUsage, ToolCallOut } from '../models/inference-backend.port.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import { DEFAULT_PROMPT_HYGIENE, hygienicMessages, type PromptHygiene } from './prompt-hygiene.js';
import { choicesOf, maxPossibleTokens } from './metered-call.js';
import { parseLabelText } from './label-text.js';

export interface Conversation {
  messages: ChatMessage[];
  options: Record<string, unknown>;
  sampling: Record<string, unknown>;
  /** Labels given as a list (`categories`). */
  labels: string[] | null;
  /** Labels written as text (a system message or `instructions`) and the param that holds them. */
  labelText: { text: string; param: string } | null;
  /** The param context-length errors name (`messages` or `input`). */
  inputParam: string;
  /** `auto` drops the oldest turns of a conversation that does not fit; `disabled` refuses it. */
  truncation: 'auto' | 'disabled';
  /** The session the conversation belongs to, for the router's session affinity. */
  affinity?: AffinityHints;
  /** Anthropic's `thinking` setting of a Messages request: an upstream that speaks Messages sends it; any other leaves it out. */
  thinking?: Record<string, unknown>;
}

export type PreparedCall =
  | { kind: 'chat'; model: ModelSpec; backend: InferenceBackend; messages: ChatMessage[]; conversation: Conversation }
  | { kind: 'task'; model: ModelSpec; backend: InferenceBackend; input: string; labels: string[] | null; conversation: Conversation };

export interface ChatResult {
  content: string;
  reasoning: string | null;
  finishReason: string;
  usage: TokenUsage;
  /** An upstream's answer as sent (choices and fields), carried to the client. */
  carried?: CarriedAnswer;
  /** An in-process runtime's tool calls. */
  toolCalls?: ToolCallOut[];
}

/** An input over the model's context window, with the counts a wire may word its own way (Anthropic's `prompt is too long`). */
export class ContextLengthError extends AppError {
  /** The model's context window, in tokens. */
  readonly limit: number;

  constructor(
    model: ModelSpec,
    param: string,
    readonly tokens: number,
    readonly exact: boolean,
  ) {
    super('context_length', `Input exceeds max_tokens (${model.contextLength}) for model: ${model.id} (the input has ${exact ? '' : 'about '}${tokens} tokens)`, {
      param,
      code: 'context_length_exceeded',
    });
    this.limit = model.contextLength;
  }
}

export const contextLengthExceeded = (model: ModelSpec, param: string, tokens: number, exact: boolean): AppError => new ContextLengthError(model, param, tokens, exact);

/** Refuses `text` when it has more tokens than the model's context (before anything runs). */
export async function assertWithinContext(registry: ModelResolver, model: ModelSpec, text: string, param: string): Promise<void> {
  // Cheap bound first: no tokenizer produces more tokens than bytes, so most inputs never need counting.
  if (maxPossibleTokens(text) <= model.contextLength) return;
  const counted = await registry.countTokens(model, text);
  if (counted.tokens > model.contextLength) throw contextLengthExceeded(model, param, counted.tokens, counted.exact);
}

/** No tokenizer makes more tokens than bytes: most conversations fit without counting. */
const fitsWithoutCounting = (model: ModelSpec, messages: readonly ChatMessage[]) =>
  messages.reduce((n, m) => n + maxPossibleTokens(m.content), 0) <= model.contextLength;

/** The backend call of a prepared chat-model call (same for the one-shot and the streamed path). */
function chatParams(call: Extract<PreparedCall, { kind: 'chat' }>, context: CallContext): ChatParams {
  const params: ChatParams = {
    requestId: context.requestId,
    signal: context.signal,
    model: call.model,
    messages: call.messages,
    options: call.conversation.options,
    sampling: call.conversation.sampling,
  };
  if (context.onServed) params.onServed = context.onServed;
  if (context.story) params.story = context.story;
  if (context.betas) params.betas = context.betas;
  const affinity = call.conversation.affinity ?? context.affinity;
  if (affinity) params.affinity = affinity;
  if (call.conversation.thinking) params.thinking = call.conversation.thinking;
  return params;
}

/**
 * The call run with a lowered output cap: the meter granted `cap` tokens instead of the
 * model's default (a request that set no cap; see CreditMeter). A task model's result is
 * not generated token by token and takes no cap.
 */
export function withOutputCap(call: PreparedCall, cap: number | undefined): PreparedCall {
  if (cap === undefined || call.kind === 'task') return call;
  // The cap was granted for every choice together.
  const perChoice = Math.max(1, Math.floor(cap / choicesOf(call.conversation.sampling)));
  const sampling = { ...call.conversation.sampling, max_tokens: perChoice };
  return { ...call, conversation: { ...call.conversation, sampling } };
}

type Honoured = 'tools' | 'response_format';

/**
 * Carried fields a task model or an in-process runtime cannot honour: sent with effect,
 * they are refused rather than silently dropped, unless the runtime honours them (its
 * backend's `honours`; `tools` covers tool_choice and tool calls in the conversation).
 */
const UNCARRIED: ReadonlyArray<[string, (value: unknown) => boolean, Honoured?]> = [
  ['tools', (v) => Array.isArray(v) && v.length > 0, 'tools'],
  ['tool_choice', (v) => v !== 'none' && v !== 'auto', 'tools'],
  ['n', (v) => v !== 1],
  ['logprobs', (v) => v === true],
];

/** Beyond those, what an in-process chat runtime cannot honour (a task model's answer is JSON anyway). */
const UNCARRIED_IN_PROCESS: ReadonlyArray<[string, (value: unknown) => boolean, Honoured?]> = [
  ...UNCARRIED,
  ['top_logprobs', (v) => v !== 0],
  ['logit_bias', (v) => typeof v === 'object' && v !== null && Object.keys(v).length > 0],
  ['response_format', (v) => (v as { type?: unknown }).type !== 'text', 'response_format'],
];

const TEXT_PART_TYPES: ReadonlySet<unknown> = new Set(['text', 'input_text', 'output_text']);
const NOTHING_HONOURED: ReadonlySet<Honoured> = new Set();

/** The first carried field or message part `model`'s runtime cannot honour, as a param; null when none. */
function uncarried(conversation: Conversation, fields: typeof UNCARRIED, honours: ReadonlySet<Honoured>): string | null {
  for (const [field, sent, honouredAs] of fields) {
    const value = conversation.sampling[field];
    if (value !== undefined && sent(value) && !(honouredAs && honours.has(honouredAs))) return field;
  }
  for (const [i, m] of conversation.messages.entries()) {
    if (m.tool_calls?.length && !honours.has('tools')) return `${conversation.inputParam}[${i}].tool_calls`;
    if (!Array.isArray(m.wireContent)) continue;
    const part = (m.wireContent as Array<{ type?: unknown }>).findIndex((p) => !TEXT_PART_TYPES.has(p.type));
    if (part !== -1) return `${conversation.inputParam}[${i}].content[${part}]`;
  }
  return null;
}

/** 400 naming the field and the model, for a request the model's runtime cannot serve as asked. */
function refuseUncarried(model: ModelSpec, runtime: string, conversation: Conversation, backend?: InferenceBackend): void {
  const param = backend
    ? uncarried(conversation, UNCARRIED_IN_PROCESS, backend.honours ?? NOTHING_HONOURED)
    : uncarried(conversation, UNCARRIED, NOTHING_HONOURED);
  if (param !== null) throw invalidRequest(`${param} is not supported by model ${model.id} (${runtime})`, param);
}

export class ChatRunner {
  constructor(
    private readonly registry: ModelResolver,
    private readonly hygiene: PromptHygiene = DEFAULT_PROMPT_HYGIENE,
  ) {}

  /** Everything that can refuse the request without running it: shape, labels, context length, backend. */
  async prepare(model: ModelSpec, conversation: Conversation, streaming: boolean): Promise<PreparedCall> {
    if (model.entry.task !== 'chat') refuseUncarried(model, `a ${model.entry.task} model`, conversation);
    if (model.entry.task === 'chat') {
      const hygienic = hygienicMessages(this.hygiene, model, conversation.messages);
      if (hygienic !== conversation.messages) conversation = { ...conversation, messages: hygienic };
      const messages = fitsWithoutCounting(model, conversation.messages)
        ? conversation.messages
        : await this.#fitConversation(model, conversation);
      const backend = await this.registry.backendFor(model, streaming ? 'chatStream' : 'chat');
      if (!model.binding.upstream) refuseUncarried(model, `served in-process by ${backend.kind}`, conversation, backend);
      return { kind: 'chat', model, backend, messages, conversation };
    }
    const input = conversation.messages
      .filter((m) => m.role !== 'system')
      .map((m) => m.content)
      .join('\n');
    if (input === '') throw invalidRequest(`${conversation.inputParam} must include a user message`, conversation.inputParam);
    let labels = conversation.labels;
    if (!labels && conversation.labelText && model.entry.task === 'classification') {
      labels = parseLabelText(conversation.labelText.text, conversation.labelText.param);
    }
    if (!model.entry.truncatesInput) await assertWithinContext(this.registry, model, input, conversation.inputParam);
    const backend = await this.registry.backendFor(model, 'runTask');
    return { kind: 'task', model, backend, input, labels, conversation };
  }

  /** Not async: the backend's own promise is returned (a ChatOutput is a ChatResult), no extra turn per call. */
  run(call: PreparedCall, context: CallContext): Promise<ChatResult> {
    if (call.kind === 'task') return this.#runTask(call, context);
    return call.backend.chat!(chatParams(call, context));
  }

  /** Streams a prepared call; a task model's result arrives as one delta. The last event is always `usage`. */
  async *stream(call: PreparedCall, context: CallContext): AsyncGenerator<ChatStreamEvent> {
    if (call.kind === 'task') {
      const result = await this.#runTask(call, context);
      yield { type: 'delta', content: result.content };
      yield { type: 'finish', finishReason: result.finishReason };
      yield { type: 'usage', usage: result.usage };
      return;
    }
    yield* call.backend.chatStream!(chatParams(call, context));
  }

  /** Input tokens of a conversation, as the pre-check counts them (message contents). */
  async countInput(model: ModelSpec, messages: ChatMessage[]): Promise<number> {
    let total = 0;
    for (const m of messages) total += (await this.registry.countTokens(model, m.content)).tokens;
    return total;
  }

  async #runTask(call: Extract<PreparedCall, { kind: 'task' }>, context: CallContext): Promise<ChatResult> {
    const output = await call.backend.runTask!({
      requestId: context.requestId,
      signal: context.signal,
      model: call.model,
      input: call.input,
      labels: call.labels,
      options: call.conversation.options,
      onServed: context.onServed,
      story: context.story,
    });
    const content = typeof output.result === 'string' ? output.result : JSON.stringify(output.result);
    if (content === undefined) throw new AppError('internal', `Model ${call.model.id} returned no result`);
    return { content, reasoning: null, finishReason: 'stop', usage: output.usage };
  }

  async #fitConversation(model: ModelSpec, conversation: Conversation): Promise<ChatMessage[]> {
    const { messages } = conversation;
    const counts: number[] = [];
    let exact = true;
    for (const m of messages) {
      const counted = await this.registry.countTokens(model, m.content);
      counts.push(counted.tokens);
      exact &&= counted.exact;
    }
    let total = counts.reduce((a, b) => a + b, 0);
    if (total <= model.contextLength) return messages;
    if (conversation.truncation === 'disabled') throw contextLengthExceeded(model, conversation.inputParam, total, exact);
    // Drop the oldest non-system turns, keeping the last message, until the rest fits.
    const keep = messages.map(() => true);
    for (let i = 0; i < messages.length - 1 && total > model.contextLength; i++) {
      if (messages[i]!.role === 'system') continue;
      keep[i] = false;
      total -= counts[i]!;
    }
    if (total > model.contextLength) throw contextLengthExceeded(model, conversation.inputParam, total, exact);
    return messages.filter((_, i) => keep[i]);
  }
}
