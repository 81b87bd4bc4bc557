/**
 * Spans around the work of other modules, added from outside them when tracing is on:
 * inference backends (ONNX, GGUF, and the upstream call's parent span), the credit check
 * and the usage transaction. Decorators rather than edits inside those modules, so the
 * tracing-off path is exactly the code it was.
 */
import type { Span } from '@opentelemetry/api';
import type { ChatStreamEvent, InferenceBackend, TokenUsage } from '../domain/models/inference-backend.port.js';
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import { failSpan, inSpan, tracer } from './tracing.js';
import { genAiCall, genAiStream, type GenAiOperation, type ModelCall } from './genai-tracing.js';
import { withMethods } from './method-proxy.js';

const PROMISE_CAPABILITIES = ['chat', 'runTask', 'embed', 'moderate', 'transcribe'] as const;

type ModelParams = { model: Pick<ModelSpec, 'id' | 'binding'> };

/** Whatever a runtime's factory takes (the registry's BackendDeps), it returns a backend. */
type BackendFactory<Deps> = (deps: Deps) => InferenceBackend;

/** The capabilities that are GenAI operations, when the GenAI conventions are asked for (genai-tracing.ts). */
const GEN_AI_OPERATIONS: Partial<Record<keyof InferenceBackend, GenAiOperation>> = {
  chat: 'chat',
  chatStream: 'chat',
  complete: 'text_completion',
  completeStream: 'text_completion',
  embed: 'embeddings',
};

/**
 * The same backend with a span per inference call: `inference.<capability>` with model and
 * runtime attributes or, with `genAi`, the GenAI conventions' span for chat, text
 * completions and embeddings (the other capabilities keep theirs).
 */
export function traceBackend(backend: InferenceBackend, genAi = false): InferenceBackend {
  const methods = new Map<PropertyKey, unknown>();
  for (const capability of PROMISE_CAPABILITIES) {
    const call = backend[capability] as ((params: ModelParams) => Promise<unknown>) | undefined;
    if (!call) continue;
    methods.set(capability, (params: ModelParams) =>
      inSpan(`inference.${capability}`, { 'sluice.model': params.model.id, 'sluice.runtime': runtimeOf(backend, params.model) }, () => call.call(backend, params)),
    );
  }
  const stream = backend.chatStream;
  if (stream) {
    const traced: InferenceBackend['chatStream'] = (params) =>
      tracedStream(`inference.chatStream`, params.model.id, runtimeOf(backend, params.model), () => stream.call(backend, params));
    methods.set('chatStream', traced);
  }
  if (genAi) for (const [capability, method] of genAiMethods(backend)) methods.set(capability, method);
  return withMethods(backend, methods);
}

function genAiMethods(backend: InferenceBackend): [string, unknown][] {
  const methods: [string, unknown][] = [];
  for (const [capability, operation] of Object.entries(GEN_AI_OPERATIONS) as [keyof InferenceBackend, GenAiOperation][]) {
    const method = backend[capability] as ((params: ModelCall) => unknown) | undefined;
    if (typeof method !== 'function') continue;
    const streams = capability.endsWith('Stream');
    methods.push([
      capability,
      streams
        ? (params: ModelCall) => genAiStream(operation, params, () => method.call(backend, params) as AsyncIterable<ChatStreamEvent>)
        : (params: ModelCall) => genAiCall(operation, params, () => method.call(backend, params) as Promise<{ usage: TokenUsage }>),
    ]);
  }
  return methods;
}

/** What serves the model: its upstream's protocol (e.g. `openai`), or the in-process runtime. */
const runtimeOf = (backend: InferenceBackend, model: ModelParams['model']): string => model.binding.upstream?.protocol ?? backend.kind;

async function* tracedStream<T>(name: string, model: string, runtime: string, open: () => AsyncIterable<T>): AsyncIterable<T> {
  const span: Span = tracer().startSpan(name, { attributes: { 'sluice.model': model, 'sluice.runtime': runtime } });
  try {
    yield* open();
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export function traceBackendFactories<K extends string, Deps>(
  factories: Partial<Record<K, BackendFactory<Deps>>>,
  genAi = false,
): Partial<Record<K, BackendFactory<Deps>>> {
  const traced: Partial<Record<K, BackendFactory<Deps>>> = {};
  for (const [kind, factory] of Object.entries(factories) as [K, BackendFactory<Deps> | undefined][]) {
    if (factory) traced[kind] = (deps) => traceBackend(factory(deps), genAi);
  }
  return traced;
}

/** Spans for the credit check before a call (the balance read that admission waits for) and the usage transaction after it. */
export function traceBilling(billing: BillingService): void {
  const balanceOf = billing.balanceOf.bind(billing);
  const write = billing.write.bind(billing);
  billing.balanceOf = (projectId) => inSpan('billing.credit_check', { 'sluice.project_id': projectId }, () => balanceOf(projectId));
  billing.write = (record, options) =>
    inSpan('billing.usage_transaction', { 'sluice.project_id': record.projectId, 'sluice.model': record.model }, () => write(record, options));
}
