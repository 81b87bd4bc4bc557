/**
 * Spans around the work of other modules, added from outside them when tracing is on:
 * inference backends (ONNX, GGUF, and the upstream call's parent span), the credit check
 * and the usage transaction. Decorators rather than edits inside those modules, so the
 * tracing-off path is exactly the code it was.
 */
import type { Span } from '@opentelemetry/api';
import type { InferenceBackend } from '../domain/models/inference-backend.port.js';
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import { failSpan, inSpan, tracer } from './tracing.js';

const PROMISE_CAPABILITIES = ['chat', 'runTask', 'embed', 'moderate', 'transcribe'] as const;

type ModelParams = { model: Pick<ModelSpec, 'id' | 'binding'> };

/** Whatever a runtime's factory takes (the registry's BackendDeps), it returns a backend. */
type BackendFactory<Deps> = (deps: Deps) => InferenceBackend;

/**
 * The same backend with a span per inference call (`inference.<capability>`, model and
 * runtime attributes). A Proxy rather than a prototype copy: every other method (token
 * counts, status, close, the ONNX backend's decision helpers) must run with the backend
 * itself as `this`, since the backends keep their state in private fields, and
 * `instanceof` must still see the backend's class.
 */
export function traceBackend(backend: InferenceBackend): InferenceBackend {
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
  return new Proxy(backend, {
    get(target, property) {
      const known = methods.get(property);
      if (known !== undefined) return known;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      methods.set(property, bound);
      return bound;
    },
  });
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
): Partial<Record<K, BackendFactory<Deps>>> {
  const traced: Partial<Record<K, BackendFactory<Deps>>> = {};
  for (const [kind, factory] of Object.entries(factories) as [K, BackendFactory<Deps> | undefined][]) {
    if (factory) traced[kind] = (deps) => traceBackend(factory(deps));
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
