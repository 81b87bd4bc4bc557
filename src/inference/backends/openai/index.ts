/**
 * The `openai` backend: any OpenAI-compatible server (vLLM, SGLang, llama.cpp server,
 * Ollama, TEI, another Sluice). Requests go out with the binding's `upstream_model`;
 * answers come back in the port's shapes. When an upstream reports no usage, tokens are
 * counted with the model's tokenizer.json if installed, else estimated (token-counter.ts).
 */
import type { Logger } from 'pino';
import type { ModelSpec } from '../../../domain/models/model-spec.types.js';
import type { BackendStatus, ChatOutput, ChatParams, ChatStreamEvent, EmbeddingOutput, EmbeddingParams, InferenceBackend, ModerationOutput, ModerationParams, NextTokenOutput, NextTokenParams, TaskOutput, TaskParams, TokenUsage } from '../../../domain/models/inference-backend.port.js';
import type { BackendDeps } from '../../registry.js';
import type { TokenCounter } from '../../token-counter.js';
import { UpstreamClient, type UpstreamTarget } from './client.js';
import { upstreamProtocolError, upstreamTransportError } from './errors.js';
import { chatBody, embeddingBody, moderationBody, taskBody } from './map-request.js';
import { readChatCompletion, readEmbeddings, readModerations, readStreamChunk } from './map-response.js';
import { SseDecoder } from './sse-decoder.js';
import { UpstreamProbes } from './upstream-probes.js';

export function createOpenAIBackend(deps: BackendDeps): InferenceBackend {
  return new OpenAIBackend(deps.tokens, deps.logger);
}

/**
 * The one-token, greedy completion the next-token read asks for. 20 alternatives: the
 * most OpenAI's API accepts for `top_logprobs`, and vLLM's default `max_logprobs`.
 */
const NEXT_TOKEN_SAMPLING = Object.freeze({ max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 });

const header = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? (value[0] ?? null) : (value ?? null));

export class OpenAIBackend implements InferenceBackend {
  readonly kind = 'openai' as const;
  readonly #client = new UpstreamClient();
  readonly #probes = new UpstreamProbes();

  constructor(
    private readonly tokens: TokenCounter,
    private readonly logger: Logger,
  ) {}

  async status(model: ModelSpec): Promise<BackendStatus> {
    if (!model.binding.baseUrl) {
      return { ready: false, detail: 'it has no upstream', remedy: `set models.${model.id}.base_url in sluice.yaml to an OpenAI-compatible server and restart` };
    }
    const state = this.#probes.peek(model.binding.baseUrl);
    if (state.kind !== 'unreachable') return { ready: true, detail: `upstream ${model.binding.baseUrl}` };
    const since = new Date(state.sinceMs).toISOString();
    return {
      ready: true,
      detail: `upstream ${model.binding.baseUrl} unreachable since ${since} (${state.reason})`,
      unreachable: { since, reason: state.reason },
    };
  }

  async probe(models: readonly ModelSpec[]): Promise<void> {
    const targets = new Map<string, { baseUrl: string; apiKey: string | null }>();
    for (const m of models) {
      if (m.binding.backend === 'openai' && m.binding.baseUrl) targets.set(m.binding.baseUrl, { baseUrl: m.binding.baseUrl, apiKey: m.binding.apiKey });
    }
    await this.#probes.refresh(targets.values());
  }

  async chat(params: ChatParams): Promise<ChatOutput> {
    const target = this.#target(params.model);
    const { body, headers } = await this.#client.postJson<unknown>(target, '/chat/completions', chatBody(params, false), params);
    const chat = readChatCompletion(body);
    if (!chat) throw upstreamProtocolError(params.model.id, 'the answer has no choices');
    const usage = chat.usage ?? (await this.#countChatUsage(params, chat.content + (chat.reasoning ?? '')));
    // Spelled out: on Node 20 a literal that spreads and then adds properties takes V8's slow path.
    const output: ChatOutput = { content: chat.content, reasoning: chat.reasoning, finishReason: chat.finishReason, usage, upstreamRequestId: header(headers['x-request-id']) };
    if (chat.logprobs) output.logprobs = chat.logprobs;
    return output;
  }

  /** The first answer token's top alternatives; 502 `upstream_error` when the upstream sends none. */
  async nextTokenLogprobs(params: NextTokenParams): Promise<NextTokenOutput> {
    const { model, messages, requestId, signal } = params;
    const chat = await this.chat({ model, messages, requestId, signal, options: {}, sampling: { ...NEXT_TOKEN_SAMPLING } });
    const first = chat.logprobs?.[0];
    if (!first) throw upstreamProtocolError(model.id, 'the answer carries no logprobs (the server must support `logprobs` and `top_logprobs`)');
    // The chosen token heads the list when the upstream left it out of its alternatives.
    const logprobs = first.top.some((t) => t.token === first.token) ? first.top : [{ token: first.token, logprob: first.logprob }, ...first.top];
    return { logprobs, usage: chat.usage };
  }

  async *chatStream(params: ChatParams): AsyncGenerator<ChatStreamEvent> {
    const target = this.#target(params.model);
    const response = await this.#client.post(target, '/chat/completions', chatBody(params, true), params, 'text/event-stream');
    const decoder = new SseDecoder();
    let usage: TokenUsage | null = null;
    let finished = false;
    let done = false;
    let produced = '';
    try {
      // Read to the natural end even after [DONE], so the keep-alive socket can be reused.
      for await (const bytes of response.body) {
        for (const event of decoder.push(bytes as Buffer)) {
          if (done) continue;
          if (event.data === '[DONE]') {
            done = true;
            continue;
          }
          for (const e of this.#parseEvent(params.model.id, event.event, event.data)) {
            if (e.type === 'usage') usage = e.usage;
            else {
              if (e.type === 'finish') finished = true;
              else produced += (e.content ?? '') + (e.reasoning ?? '');
              yield e;
            }
          }
        }
      }
    } catch (err) {
      throw upstreamTransportError(params.model.id, err, params.signal);
    } finally {
      if (!response.body.readableEnded) response.body.destroy();
    }
    if (!finished && !done) throw upstreamProtocolError(params.model.id, 'the stream ended before the answer finished');
    yield { type: 'usage', usage: usage ?? (await this.#countChatUsage(params, produced)) };
  }

  async runTask(params: TaskParams): Promise<TaskOutput> {
    const target = this.#target(params.model);
    const { body } = await this.#client.postJson<unknown>(target, '/chat/completions', taskBody(params), params);
    const chat = readChatCompletion(body);
    if (!chat) throw upstreamProtocolError(params.model.id, 'the answer has no choices');
    let result: unknown = chat.content;
    if (params.model.entry.task !== 'summarization') {
      try {
        result = JSON.parse(chat.content);
      } catch {
        throw upstreamProtocolError(params.model.id, 'the task result is not JSON');
      }
    }
    const usage = chat.usage ?? {
      inputTokens: (await this.tokens.count(params.model, params.input)).tokens,
      outputTokens: (await this.tokens.count(params.model, chat.content)).tokens,
    };
    return { result, usage };
  }

  async embed(params: EmbeddingParams): Promise<EmbeddingOutput> {
    const target = this.#target(params.model);
    const { body } = await this.#client.postJson<unknown>(target, '/embeddings', embeddingBody(params), params);
    const parsed = readEmbeddings(body, params.inputs.length);
    if (!parsed) throw upstreamProtocolError(params.model.id, `expected ${params.inputs.length} embeddings`);
    const usage = parsed.usage ?? { inputTokens: await this.#countAll(params.model, params.inputs), outputTokens: 0 };
    return { vectors: parsed.vectors, usage };
  }

  async moderate(params: ModerationParams): Promise<ModerationOutput> {
    const target = this.#target(params.model);
    const { body } = await this.#client.postJson<unknown>(target, '/moderations', moderationBody(params), params);
    const results = readModerations(body, params.inputs.length);
    if (!results) throw upstreamProtocolError(params.model.id, `expected ${params.inputs.length} moderation results`);
    // Moderation endpoints report no usage; meter the inputs with the model's tokenizer.
    return { results, usage: { inputTokens: await this.#countAll(params.model, params.inputs), outputTokens: 0 } };
  }

  async close(): Promise<void> {
    await this.#client.close();
  }

  #parseEvent(modelId: string, type: string | null, data: string): ChatStreamEvent[] {
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch {
      throw upstreamProtocolError(modelId, 'a stream event is not JSON');
    }
    if (type === 'error' || (chunk.error !== undefined && chunk.error !== null)) {
      const error = chunk.error as { message?: unknown } | string | undefined;
      const message = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : 'error event';
      throw upstreamProtocolError(modelId, message);
    }
    return readStreamChunk(chunk);
  }

  #target(model: ModelSpec): UpstreamTarget {
    const { baseUrl, apiKey, timeoutMs } = model.binding;
    if (!baseUrl) throw new Error(`model ${model.id} has no base_url`); // status() keeps the registry from calling here
    return { modelId: model.id, baseUrl, apiKey, timeoutMs };
  }

  async #countAll(model: ModelSpec, texts: string[]): Promise<number> {
    let total = 0;
    for (const t of texts) total += (await this.tokens.count(model, t)).tokens;
    return total;
  }

  async #countChatUsage(params: ChatParams, output: string): Promise<TokenUsage> {
    const input = await this.#countAll(params.model, params.messages.map((m) => m.content));
    const counted = await this.tokens.count(params.model, output);
    if (!counted.exact) this.logger.debug({ model: params.model.id }, 'upstream reported no usage; billing estimated tokens');
    return { inputTokens: input, outputTokens: counted.tokens };
  }
}
