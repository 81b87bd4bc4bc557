/**
 * The upstream backend: every model served by engines over a network protocol, whatever
 * the protocol. Every call goes through the router (../routing/), which picks the model's
 * deployment, retries elsewhere, cools failing deployments down and falls back to other
 * models; each attempt is made by the protocol adapter of the model it lands on
 * (protocols/<name>/), so a fallback may cross protocols. A stream counts as answered,
 * for the router, once its first event arrived.
 */
import type { Logger } from 'pino';
import { DEFAULT_UPSTREAM_PROTOCOL, type ModelSpec } from '../../domain/models/model-spec.types.js';
import type {
  BackendStatus,
  CallContext,
  ChatOutput,
  ChatParams,
  ChatStreamEvent,
  CompletionOutput,
  CompletionParams,
  DeploymentStatus,
  EmbeddingOutput,
  EmbeddingParams,
  InferenceBackend,
  ModerationOutput,
  ModerationParams,
  NextTokenOutput,
  NextTokenParams,
  TaskOutput,
  TaskParams,
} from '../../domain/models/inference-backend.port.js';
import type { EngineCountContext, PromptToCount } from '../../domain/models/prompt-count.types.js';
import { AppError } from '../../domain/shared/errors.js';
import type { BackendDeps } from '../backend-deps.js';
import { Router, type RoutingMetrics } from '../routing/router.js';
import type { UpstreamAttempt, UpstreamCapability, UpstreamProtocol, UpstreamProtocolEntry } from './protocol.js';
import { UpstreamProbes, type ProbeJob } from './probes.js';
import { upstreamStatus } from './status.js';
import { upstreamProtocolError } from './errors.js';

export function createUpstreamBackend(deps: BackendDeps, options: { metrics?: RoutingMetrics } = {}): InferenceBackend {
  return new UpstreamBackend(deps, new Router(deps.config, options.metrics ?? null));
}

/**
 * The one-token, greedy completion the next-token read asks for. 20 alternatives: the
 * most OpenAI's API accepts for `top_logprobs`, and vLLM's default `max_logprobs`.
 */
const NEXT_TOKEN_SAMPLING = Object.freeze({ max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 });

/** A stream whose first event has arrived, and the events after it. */
interface OpenedStream {
  first: IteratorResult<ChatStreamEvent>;
  events: AsyncGenerator<ChatStreamEvent>;
}

type StreamCapability = 'chatStream' | 'completeStream';

/** How long an engine that counted nothing is left alone before it is asked again. */
const NO_TOKENIZE_RECHECK_MS = 60_000;

export class UpstreamBackend implements InferenceBackend {
  readonly kind = 'upstream' as const;
  readonly #entries: ReadonlyMap<string, UpstreamProtocolEntry>;
  readonly #adapters = new Map<string, UpstreamProtocol>();
  readonly #probes = new UpstreamProbes();
  /** Engines whose token count came back empty, until when they are not asked again. */
  readonly #noTokenizeUntil = new Map<string, number>();
  /** The probe finding each deployment was last told about (a finding counts once). */
  readonly #fedProbes = new Map<string, number>();
  readonly #logger: Logger;

  constructor(
    private readonly deps: BackendDeps,
    private readonly router: Router,
  ) {
    this.#entries = new Map(deps.protocols.map((p) => [p.name, p]));
    this.#logger = deps.logger;
  }

  async status(model: ModelSpec): Promise<BackendStatus> {
    if (model.binding.deployments.length === 0) {
      const where = model.binding.upstream?.protocol === DEFAULT_UPSTREAM_PROTOCOL ? 'base_url in sluice.yaml to an OpenAI-compatible server' : 'upstream.deployments in sluice.yaml';
      return { ready: false, detail: 'it has no upstream', remedy: `set models.${model.id}.${where} and restart` };
    }
    return upstreamStatus(model, this.router, this.#probes);
  }

  deployments(model: ModelSpec): DeploymentStatus[] {
    return this.router.states(model);
  }

  /** Probes every deployment's engine with its protocol's probe; what they find feeds the router (an engine found dead is taken out). */
  async probe(models: readonly ModelSpec[]): Promise<void> {
    const jobs = new Map<string, ProbeJob>();
    const probed = models.flatMap((m) => {
      const probe = m.binding.upstream && this.#adapter(m.binding.upstream.protocol).probe;
      if (!probe) return [];
      for (const d of m.binding.deployments) jobs.set(d.baseUrl, { baseUrl: d.baseUrl, apiKey: d.apiKey, probe });
      return m.binding.deployments;
    });
    await Promise.all([this.#probes.refresh(jobs.values()), this.router.syncShared()]);
    for (const d of probed) {
      const state = this.#probes.peek(d.baseUrl);
      if (state.kind === 'unknown' || this.#fedProbes.get(d.id) === state.checkedAtMs) continue;
      this.#fedProbes.set(d.id, state.checkedAtMs);
      this.router.health.probed(d, state.kind === 'unreachable' ? state.reason : null, state.checkedAtMs);
    }
  }

  chat(params: ChatParams): Promise<ChatOutput> {
    return this.router.run(params.model, params, (model, deployment) => this.#serving(model, 'chat').chat!(params, { model, deployment }));
  }

  /** The first answer token's top alternatives; 502 `upstream_error` when the upstream sends none. */
  async nextTokenLogprobs(params: NextTokenParams): Promise<NextTokenOutput> {
    const { model, messages, requestId, signal } = params;
    const chat = await this.chat({ model, messages, requestId, signal, options: {}, sampling: { ...NEXT_TOKEN_SAMPLING }, onServed: params.onServed });
    const first = chat.logprobs?.[0];
    if (!first) throw upstreamProtocolError(model.id, 'the answer carries no logprobs (the server must support `logprobs` and `top_logprobs`)');
    // The chosen token heads the list when the upstream left it out of its alternatives.
    const logprobs = first.top.some((t) => t.token === first.token) ? first.top : [{ token: first.token, logprob: first.logprob }, ...first.top];
    return { logprobs, usage: chat.usage };
  }

  chatStream(params: ChatParams): AsyncGenerator<ChatStreamEvent> {
    return this.#routedStream(params, 'chatStream', (adapter, at) => adapter.chatStream!(params, at));
  }

  complete(params: CompletionParams): Promise<CompletionOutput> {
    return this.router.run(params.model, params, (model, deployment) => this.#serving(model, 'complete').complete!(params, { model, deployment }));
  }

  completeStream(params: CompletionParams): AsyncGenerator<ChatStreamEvent> {
    return this.#routedStream(params, 'completeStream', (adapter, at) => adapter.completeStream!(params, at));
  }

  runTask(params: TaskParams): Promise<TaskOutput> {
    return this.router.run(params.model, params, (model, deployment) => this.#serving(model, 'runTask').runTask!(params, { model, deployment }));
  }

  embed(params: EmbeddingParams): Promise<EmbeddingOutput> {
    return this.router.run(params.model, params, (model, deployment) => this.#serving(model, 'embed').embed!(params, { model, deployment }));
  }

  moderate(params: ModerationParams): Promise<ModerationOutput> {
    return this.router.run(params.model, params, (model, deployment) => this.#serving(model, 'moderate').moderate!(params, { model, deployment }));
  }

  async close(): Promise<void> {
    await Promise.all([...[...this.#adapters.values()].map((a) => a.close()), this.router.close()]);
  }

  async *#routedStream(
    params: CallContext & { model: ModelSpec },
    capability: StreamCapability,
    start: (adapter: UpstreamProtocol, at: UpstreamAttempt) => AsyncGenerator<ChatStreamEvent>,
  ): AsyncGenerator<ChatStreamEvent> {
    const routed = await this.router.open(params.model, params, (model, deployment) => openStream(start(this.#serving(model, capability), { model, deployment })));
    try {
      // The first event and the rest relayed here, not by a generator wrapping them: one layer fewer for every chunk.
      const { first, events } = routed.value;
      if (first.done) return;
      yield first.value;
      yield* events;
    } finally {
      routed.release();
    }
  }

  /**
   * The prompt counted by the first of the model's engines that can (its protocol's
   * `tokenize`), or null. An engine that counted nothing is not asked again for a while:
   * a client counting on start-up (dozens of calls) meets one refusal, not dozens.
   */
  async tokenize(model: ModelSpec, prompt: PromptToCount, context: EngineCountContext): Promise<number | null> {
    const adapter = this.#adapter(model.binding.upstream?.protocol ?? DEFAULT_UPSTREAM_PROTOCOL);
    if (!adapter.tokenize) return null;
    const now = Date.now();
    for (const deployment of model.binding.deployments) {
      if ((this.#noTokenizeUntil.get(deployment.baseUrl) ?? 0) > now) continue;
      const count = await adapter.tokenize(prompt, { model, deployment }, context);
      if (count !== null) return count;
      this.#noTokenizeUntil.set(deployment.baseUrl, now + NO_TOKENIZE_RECHECK_MS);
    }
    return null;
  }

  /** The adapter of the protocol `model` is bound to, when it has `capability`; else 503 `model_not_available`. */
  #serving(model: ModelSpec, capability: UpstreamCapability): UpstreamProtocol {
    const protocol = model.binding.upstream?.protocol ?? DEFAULT_UPSTREAM_PROTOCOL;
    const adapter = this.#adapter(protocol);
    if (typeof adapter[capability] === 'function') return adapter;
    throw new AppError('unavailable', `Model ${model.id} is not available: the ${protocol} protocol cannot serve ${model.entry.task} models (${capability})`, {
      code: 'model_not_available',
      param: 'model',
    });
  }

  #adapter(protocol: string): UpstreamProtocol {
    let adapter = this.#adapters.get(protocol);
    if (!adapter) {
      const entry = this.#entries.get(protocol);
      // The registry refused unknown protocols at start-up; this is a wiring fault.
      if (!entry) throw new Error(`no upstream protocol ${protocol} is registered`);
      adapter = entry.create({ logger: this.#logger.child({ protocol }), tokens: this.deps.tokens });
      this.#adapters.set(protocol, adapter);
    }
    return adapter;
  }
}

/**
 * Starts a stream on one deployment and resolves once its first event arrived: until
 * then a failure is the router's to retry; after it, the stream is the caller's.
 */
async function openStream(events: AsyncGenerator<ChatStreamEvent>): Promise<OpenedStream> {
  try {
    return { first: await events.next(), events };
  } catch (err) {
    await events.return(undefined).catch(() => {});
    throw err;
  }
}
