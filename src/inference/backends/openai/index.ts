/**
 * The `openai` backend: any OpenAI-compatible server (vLLM, SGLang, llama.cpp server,
 * Ollama, TEI, another Sluice). Requests go out with the binding's `upstream_model`;
 * answers come back in the port's shapes. When an upstream reports no usage, tokens are
 * counted with the model's tokenizer.json if installed, else estimated (token-counter.ts).
 * Every call goes through the router (../../routing/), which picks the model's deployment,
 * retries elsewhere and falls back to other models; a stream counts as answered, for it,
 * once its first event arrived.
 */
import type { Logger } from 'pino';
import type { Deployment, ModelSpec } from '../../../domain/models/model-spec.types.js';
import type {
  BackendStatus,
  CallContext,
  ChatOutput,
  ChatParams,
  ChatStreamEvent,
  CompletionOutput,
  CompletionParams,
  EmbeddingOutput,
  EmbeddingParams,
  InferenceBackend,
  ModerationOutput,
  ModerationParams,
  NextTokenOutput,
  NextTokenParams,
  TaskOutput,
  TaskParams,
  TokenUsage,
  DeploymentStatus,
} from '../../../domain/models/inference-backend.port.js';
import { Router, type RoutingMetrics } from '../../routing/router.js';
import type { BackendDeps } from '../../registry.js';
import type { TokenCounter } from '../../token-counter.js';
import { UpstreamClient } from './client.js';
import { upstreamProtocolError } from './errors.js';
import { chatBody, completionBody, embeddingBody, moderationBody, taskBody } from './map-request.js';
import { readChatCompletion, readCompletion, readEmbeddings, readModerations } from './map-response.js';
import { upstreamStreamEvents, type StreamRequest } from './upstream-stream.js';
import { UpstreamProbes } from './upstream-probes.js';
import { targetOf, upstreamName, upstreamStatus } from './deployments.js';

export function createOpenAIBackend(deps: BackendDeps, options: { metrics?: RoutingMetrics } = {}): InferenceBackend {
  return new OpenAIBackend(deps.tokens, deps.logger, new Router(deps.config, options.metrics ?? null));
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

const header = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? (value[0] ?? null) : (value ?? null));

export class OpenAIBackend implements InferenceBackend {
  readonly kind = 'openai' as const;
  readonly #client = new UpstreamClient();
  readonly #probes = new UpstreamProbes();
  /** The probe finding each deployment was last told about (a finding counts once). */
  readonly #fedProbes = new Map<string, number>();

  constructor(
    private readonly tokens: TokenCounter,
    private readonly logger: Logger,
    private readonly router: Router,
  ) {}

  async status(model: ModelSpec): Promise<BackendStatus> {
    if (model.binding.deployments.length === 0) {
      return { ready: false, detail: 'it has no upstream', remedy: `set models.${model.id}.base_url in sluice.yaml to an OpenAI-compatible server and restart` };
    }
    return upstreamStatus(model, this.router, this.#probes);
  }

  deployments(model: ModelSpec): DeploymentStatus[] {
    return this.router.states(model);
  }

  /** Probes every deployment's engine; what the probes find feeds the router (an engine found dead is taken out). */
  async probe(models: readonly ModelSpec[]): Promise<void> {
    const targets = new Map<string, { baseUrl: string; apiKey: string | null }>();
    const deployments = models.filter((m) => m.binding.backend === 'openai').flatMap((m) => m.binding.deployments);
    for (const d of deployments) targets.set(d.baseUrl, { baseUrl: d.baseUrl, apiKey: d.apiKey });
    await Promise.all([this.#probes.refresh(targets.values()), this.router.syncShared()]);
    for (const d of deployments) {
      const state = this.#probes.peek(d.baseUrl);
      if (state.kind === 'unknown' || this.#fedProbes.get(d.id) === state.checkedAtMs) continue;
      this.#fedProbes.set(d.id, state.checkedAtMs);
      this.router.health.probed(d, state.kind === 'unreachable' ? state.reason : null, state.checkedAtMs);
    }
  }

  chat(params: ChatParams): Promise<ChatOutput> {
    return this.router.run(params.model, params, (model, d) => this.#chatOnce(params, model, d));
  }

  async #chatOnce(params: ChatParams, model: ModelSpec, deployment: Deployment): Promise<ChatOutput> {
    const target = targetOf(model, deployment);
    const { body, headers } = await this.#client.postJson<unknown>(target, '/chat/completions', chatBody(params, model, upstreamName(model, deployment), false), params);
    const chat = readChatCompletion(body);
    if (!chat) throw upstreamProtocolError(model.id, 'the answer has no choices');
    const usage = chat.usage ?? (await this.#countChatUsage(params, model, chat.content + (chat.reasoning ?? '')));
    // Spelled out: on Node 20 a literal that spreads and then adds properties takes V8's slow path.
    const output: ChatOutput = {
      content: chat.content,
      reasoning: chat.reasoning,
      finishReason: chat.finishReason,
      usage,
      upstreamRequestId: header(headers['x-request-id']),
      carried: chat.carried,
    };
    if (chat.logprobs) output.logprobs = chat.logprobs;
    return output;
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
    return this.#routedStream(params, (model, d) => ({
      path: '/chat/completions',
      body: chatBody(params, model, upstreamName(model, d), true),
      count: (produced) => this.#countChatUsage(params, model, produced),
    }));
  }

  complete(params: CompletionParams): Promise<CompletionOutput> {
    return this.router.run(params.model, params, async (model, d) => {
      const { body } = await this.#client.postJson<unknown>(targetOf(model, d), '/completions', completionBody(params, model, upstreamName(model, d), false), params);
      const completion = readCompletion(body);
      if (!completion) throw upstreamProtocolError(model.id, 'the answer has no choices');
      const usage = completion.usage ?? (await this.#countCompletionUsage(params, model, completion.text));
      return { usage, carried: completion.carried };
    });
  }

  completeStream(params: CompletionParams): AsyncGenerator<ChatStreamEvent> {
    return this.#routedStream(params, (model, d) => ({
      path: '/completions',
      body: completionBody(params, model, upstreamName(model, d), true),
      count: (produced) => this.#countCompletionUsage(params, model, produced),
    }));
  }

  async *#routedStream(
    params: CallContext & { model: ModelSpec },
    requestOf: (model: ModelSpec, deployment: Deployment) => StreamRequest,
  ): AsyncGenerator<ChatStreamEvent> {
    const routed = await this.router.open(params.model, params, (model, d) => this.#openStream(params, model, d, requestOf(model, d)));
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
   * Starts a stream on one deployment and resolves once its first event arrived: until
   * then a failure is the router's to retry; after it, the stream is the caller's.
   */
  async #openStream(params: CallContext, model: ModelSpec, deployment: Deployment, request: StreamRequest): Promise<OpenedStream> {
    const events = upstreamStreamEvents(this.#client, params, model, deployment, request);
    try {
      return { first: await events.next(), events };
    } catch (err) {
      await events.return(undefined).catch(() => {});
      throw err;
    }
  }

  runTask(params: TaskParams): Promise<TaskOutput> {
    return this.router.run(params.model, params, async (model, d) => {
      const { body } = await this.#client.postJson<unknown>(targetOf(model, d), '/chat/completions', taskBody(params, upstreamName(model, d)), params);
      return this.#readTask(model, params, body);
    });
  }

  async #readTask(model: ModelSpec, params: TaskParams, body: unknown): Promise<TaskOutput> {
    const chat = readChatCompletion(body);
    if (!chat) throw upstreamProtocolError(model.id, 'the answer has no choices');
    let result: unknown = chat.content;
    if (model.entry.task !== 'summarization') {
      try {
        result = JSON.parse(chat.content);
      } catch {
        throw upstreamProtocolError(model.id, 'the task result is not JSON');
      }
    }
    const usage = chat.usage ?? {
      inputTokens: (await this.tokens.count(model, params.input)).tokens,
      outputTokens: (await this.tokens.count(model, chat.content)).tokens,
    };
    return { result, usage };
  }

  embed(params: EmbeddingParams): Promise<EmbeddingOutput> {
    return this.router.run(params.model, params, async (model, d) => {
      const { body } = await this.#client.postJson<unknown>(targetOf(model, d), '/embeddings', embeddingBody(params, upstreamName(model, d)), params);
      const parsed = readEmbeddings(body, params.inputs.length);
      if (!parsed) throw upstreamProtocolError(model.id, `expected ${params.inputs.length} embeddings`);
      const usage = parsed.usage ?? { inputTokens: await this.#countAll(model, params.inputs), outputTokens: 0 };
      return { vectors: parsed.vectors, usage };
    });
  }

  moderate(params: ModerationParams): Promise<ModerationOutput> {
    return this.router.run(params.model, params, async (model, d) => {
      const { body } = await this.#client.postJson<unknown>(targetOf(model, d), '/moderations', moderationBody(params, upstreamName(model, d)), params);
      const results = readModerations(body, params.inputs.length);
      if (!results) throw upstreamProtocolError(model.id, `expected ${params.inputs.length} moderation results`);
      // Moderation endpoints report no usage; meter the inputs with the model's tokenizer.
      return { results, usage: { inputTokens: await this.#countAll(model, params.inputs), outputTokens: 0 } };
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.#client.close(), this.router.close()]);
  }

  async #countAll(model: ModelSpec, texts: string[]): Promise<number> {
    let total = 0;
    for (const t of texts) total += (await this.tokens.count(model, t)).tokens;
    return total;
  }

  async #countCompletionUsage(params: CompletionParams, model: ModelSpec, output: string): Promise<TokenUsage> {
    return {
      inputTokens: (await this.tokens.count(model, params.promptText)).tokens,
      outputTokens: (await this.tokens.count(model, output)).tokens,
    };
  }

  async #countChatUsage(params: ChatParams, model: ModelSpec, output: string): Promise<TokenUsage> {
    const input = await this.#countAll(model, params.messages.map((m) => m.content));
    const counted = await this.tokens.count(model, output);
    if (!counted.exact) this.logger.debug({ model: model.id }, 'upstream reported no usage; billing estimated tokens');
    return { inputTokens: input, outputTokens: counted.tokens };
  }
}
