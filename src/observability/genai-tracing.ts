/**
 * Model calls in OpenTelemetry's GenAI semantic conventions, when OTEL_SEMCONV_STABILITY_OPT_IN
 * names `gen_ai_latest_experimental` (src/config/tracing-config.ts). One span per call,
 * `{gen_ai.operation.name} {gen_ai.request.model}` (the conventions' client inference span):
 * kind CLIENT for a model served over the network, INTERNAL for an in-process runtime, with
 * the provider, the model asked for and the model that answered (a fallback's, when one
 * served), the tokens, and for a stream the time to its first chunk. Under it, one span per
 * attempt the router made on a deployment (`attempt {deployment id}`), so a retried or
 * fallen-back call shows each deployment it tried and how each ended; an attempt's HTTP
 * client span is its child. Never a key or a URL; the input and output only when the
 * call's project logs bodies, in the span's `gen_ai.client.inference.operation.details`
 * event (genai-content.ts), redacted as its request log is.
 *
 * The attempts tell their call which provider and model answered through the call's
 * context (a context key), so neither the router nor the adapters know about tracing.
 */
import { context, createContextKey, SpanKind, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { CallContext, ChatStreamEvent, TokenUsage } from '../domain/models/inference-backend.port.js';
import type { Deployment, ModelSpec } from '../domain/models/model-spec.types.js';
import { AppError } from '../domain/shared/errors.js';
import { contentCapture, inputMessages, OutputMessages, recordContent, type ContentCapture } from './genai-content.js';
import { withMethods } from './method-proxy.js';
import { failSpan, tracer } from './tracing.js';

export type GenAiOperation = 'chat' | 'text_completion' | 'embeddings';

export type ModelCall = CallContext & { model: ModelSpec };

/** What a call's attempts found out, read when the call's span ends. */
interface CallState {
  operation: GenAiOperation;
  requestedModel: string;
  attempts: number;
  provider: string | null;
  servedModel: string | null;
}

const CALL_STATE = createContextKey('sluice.gen_ai.call');

/**
 * Hosted providers (sluice.yaml's `provider:`) and protocols under the names the conventions
 * give them; any other keeps its own (a self-hosted OpenAI-compatible engine is `openai`,
 * the format its client speaks; an in-process runtime is its kind, e.g. `gguf`).
 */
const CONVENTION_NAMES: Readonly<Record<string, string>> = {
  azure: 'azure.ai.openai',
  bedrock: 'aws.bedrock',
  gemini: 'gcp.gemini',
  mistral: 'mistral_ai',
};

function providerName(model: ModelSpec, deployment: Deployment | undefined): string {
  const name = deployment?.provider ?? model.binding.upstream?.protocol ?? model.binding.backend;
  return Object.hasOwn(CONVENTION_NAMES, name) ? CONVENTION_NAMES[name]! : name;
}

/** The session the call belongs to, when the request named one. */
function conversationOf(call: ModelCall): string | undefined {
  return call.sessionId ?? call.affinity?.session ?? call.affinity?.promptCacheKey ?? call.affinity?.chain;
}

function startCall(operation: GenAiOperation, call: ModelCall, stream: boolean) {
  const { model } = call;
  const attributes: Attributes = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': providerName(model, model.binding.deployments[0]),
    'gen_ai.request.model': model.id,
  };
  if (stream) attributes['gen_ai.request.stream'] = true;
  const conversation = conversationOf(call);
  if (conversation !== undefined) attributes['gen_ai.conversation.id'] = conversation;
  const kind = model.binding.upstream ? SpanKind.CLIENT : SpanKind.INTERNAL;
  const span = tracer().startSpan(`${operation} ${model.id}`, { kind, attributes });
  const state: CallState = { operation, requestedModel: model.id, attempts: 0, provider: null, servedModel: null };
  const scope = trace.setSpan(context.active(), span).setValue(CALL_STATE, state);
  // Embeddings carry no content in the conventions.
  const capture = operation === 'embeddings' ? null : contentCapture(call);
  return { span, scope, state, capture };
}

/** The call's content event, when its project logs bodies: what it got, and what it gave (nothing, when it failed). */
function recordCallContent(span: Span, capture: ContentCapture | null, call: ModelCall, output: OutputMessages | null): void {
  if (capture) recordContent(span, capture, inputMessages(call), output?.messages() ?? []);
}

function endCall(span: Span, state: CallState, usage: TokenUsage | null, finishReasons: string[]): void {
  if (state.provider !== null) span.setAttribute('gen_ai.provider.name', state.provider);
  span.setAttribute('gen_ai.response.model', state.servedModel ?? state.requestedModel);
  if (finishReasons.length > 0) span.setAttribute('gen_ai.response.finish_reasons', finishReasons);
  if (usage) setUsage(span, usage);
  span.end();
}

function setUsage(span: Span, usage: TokenUsage): void {
  span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
  span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
  if (usage.cachedTokens !== undefined) span.setAttribute('gen_ai.usage.cache_read.input_tokens', usage.cachedTokens);
  if (usage.cacheWriteTokens !== undefined) span.setAttribute('gen_ai.usage.cache_write.input_tokens', usage.cacheWriteTokens);
  if (usage.reasoningTokens !== undefined) span.setAttribute('gen_ai.usage.reasoning.output_tokens', usage.reasoningTokens);
}

/** Adds the reasons a stream's event says its choices finished for: a runtime's `finish`, or an upstream chunk's choices as sent. */
function finishReasonsOf(event: ChatStreamEvent, reasons: string[]): void {
  if (event.type === 'finish') reasons.push(event.finishReason);
  else if (event.type === 'chunk') {
    for (const choice of event.carried.choices) if (typeof choice.finish_reason === 'string') reasons.push(choice.finish_reason);
  }
}

/** Marks the span failed, with the conventions' `error.type`: the error's code (`upstream_error`, …), else its name. */
function failGenAiSpan(span: Span, err: unknown): void {
  failSpan(span, err);
  span.setAttribute('error.type', err instanceof AppError ? (err.code ?? err.kind) : err instanceof Error ? err.name : 'error');
}

/** A call answered at once (chat, text completion, embeddings) in its GenAI span. */
export async function genAiCall<R extends { usage: TokenUsage }>(operation: GenAiOperation, call: ModelCall, work: () => Promise<R>): Promise<R> {
  const { span, scope, state, capture } = startCall(operation, call, false);
  let output: R;
  try {
    output = await context.with(scope, work);
  } catch (err) {
    failGenAiSpan(span, err);
    recordCallContent(span, capture, call, null);
    span.end();
    throw err;
  }
  if (capture) {
    const answer = new OutputMessages();
    answer.addAnswer(output);
    recordCallContent(span, capture, call, answer);
  }
  const finishReason = (output as { finishReason?: unknown }).finishReason;
  endCall(span, state, output.usage, typeof finishReason === 'string' ? [finishReason] : []);
  return output;
}

/**
 * A streamed call in its GenAI span, which ends with the stream. Each step of the stream
 * runs in the span's context: the router's attempts happen inside the first one.
 */
export async function* genAiStream(operation: GenAiOperation, call: ModelCall, open: () => AsyncIterable<ChatStreamEvent>): AsyncGenerator<ChatStreamEvent> {
  const { span, scope, state, capture } = startCall(operation, call, true);
  const answer = capture ? new OutputMessages() : null;
  const startedMs = performance.now();
  let usage: TokenUsage | null = null;
  const finishReasons: string[] = [];
  let done = false;
  let events: AsyncIterator<ChatStreamEvent> | null = null;
  try {
    events = context.with(scope, () => open()[Symbol.asyncIterator]());
    for (let first = true; ; first = false) {
      const next = await context.with(scope, () => events!.next());
      if (next.done) break;
      const event = next.value;
      if (first) span.setAttribute('gen_ai.response.time_to_first_chunk', (performance.now() - startedMs) / 1000);
      if (event.type === 'usage') usage = event.usage;
      else finishReasonsOf(event, finishReasons);
      answer?.add(event);
      yield event;
    }
    done = true;
    recordCallContent(span, capture, call, answer);
    endCall(span, state, usage, finishReasons);
  } catch (err) {
    done = true;
    failGenAiSpan(span, err);
    recordCallContent(span, capture, call, answer);
    span.end();
    throw err;
  } finally {
    // The reader left before the end (a client that went away): the stream is closed, the span ends with what it saw.
    if (!done) {
      await context.with(scope, () => events?.return?.());
      span.setAttribute('error.type', 'cancelled');
      recordCallContent(span, capture, call, answer);
      endCall(span, state, usage, finishReasons);
    }
  }
}

/** Where one attempt goes (the upstream protocols' UpstreamAttempt). */
interface AttemptTarget {
  model: ModelSpec;
  deployment: Deployment;
}

function attemptAttributes(at: AttemptTarget, state: CallState | undefined): Attributes {
  const attributes: Attributes = {
    'gen_ai.provider.name': providerName(at.model, at.deployment),
    'gen_ai.request.model': at.model.id,
    'sluice.deployment': at.deployment.id,
  };
  if (state) {
    attributes['gen_ai.operation.name'] = state.operation;
    attributes['sluice.attempt'] = state.attempts;
    attributes['sluice.fallback'] = at.model.id !== state.requestedModel;
  }
  const url = URL.canParse(at.deployment.baseUrl) ? new URL(at.deployment.baseUrl) : null;
  if (url) {
    attributes['server.address'] = url.hostname;
    attributes['server.port'] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  }
  return attributes;
}

function startAttempt(at: AttemptTarget) {
  const parent = context.active();
  const state = parent.getValue(CALL_STATE) as CallState | undefined;
  if (state) state.attempts++;
  const span = tracer().startSpan(`attempt ${at.deployment.id}`, { kind: SpanKind.INTERNAL, attributes: attemptAttributes(at, state) }, parent);
  return { span, scope: trace.setSpan(parent, span), state };
}

/** The attempt answered: its provider and model are the call's. */
function served(at: AttemptTarget, state: CallState | undefined): void {
  if (!state) return;
  state.provider = providerName(at.model, at.deployment);
  state.servedModel = at.model.id;
}

async function inAttempt<R>(at: AttemptTarget, work: () => Promise<R>): Promise<R> {
  const { span, scope, state } = startAttempt(at);
  try {
    const output = await context.with(scope, work);
    served(at, state);
    return output;
  } catch (err) {
    failGenAiSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

async function* attemptStream<E>(at: AttemptTarget, open: () => AsyncGenerator<E>): AsyncGenerator<E> {
  const { span, scope, state } = startAttempt(at);
  const events = context.with(scope, open);
  try {
    for (let first = true; ; first = false) {
      const next = await context.with(scope, () => events.next());
      if (next.done) return;
      if (first) served(at, state);
      yield next.value;
    }
  } catch (err) {
    failGenAiSpan(span, err);
    throw err;
  } finally {
    await context.with(scope, () => events.return(undefined));
    span.end();
  }
}

const ANSWERING = ['chat', 'complete', 'runTask', 'embed', 'moderate'] as const;
const STREAMING = ['chatStream', 'completeStream'] as const;

type AttemptMethod = (this: unknown, params: unknown, at: AttemptTarget) => unknown;

/**
 * An upstream protocol's adapter whose calls (each one attempt on one deployment) are
 * attempt spans; its other methods (probes, token counts, checks) are untouched.
 */
export function traceAttempts<A extends object>(adapter: A): A {
  const methods = new Map<PropertyKey, unknown>();
  const methodOf = (name: string) => (adapter as Record<string, unknown>)[name] as AttemptMethod | undefined;
  for (const name of ANSWERING) {
    const method = methodOf(name);
    if (method) methods.set(name, (params: unknown, at: AttemptTarget) => inAttempt(at, () => method.call(adapter, params, at) as Promise<unknown>));
  }
  for (const name of STREAMING) {
    const method = methodOf(name);
    if (method) methods.set(name, (params: unknown, at: AttemptTarget) => attemptStream(at, () => method.call(adapter, params, at) as AsyncGenerator<unknown>));
  }
  return withMethods(adapter, methods);
}
