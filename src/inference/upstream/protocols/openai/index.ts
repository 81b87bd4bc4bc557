/**
 * The `openai` upstream protocol: any OpenAI-compatible server (vLLM, SGLang, llama.cpp
 * server, Ollama, TEI, another Sluice). One attempt on one deployment: the request in
 * OpenAI's shape with the deployment's `upstream_model`, the answer (or its SSE stream)
 * back in the port's shapes, the engine's errors as AppErrors. When the engine reports
 * no usage, tokens are counted with the model's tokenizer (../../usage-count.ts).
 */
import type { Logger } from 'pino';
import type { EngineCountContext, PromptToCount } from '../../../../domain/models/prompt-count.types.js';
import type {
  ChatOutput,
  ChatParams,
  ChatStreamEvent,
  CompletionOutput,
  CompletionParams,
  EmbeddingOutput,
  EmbeddingParams,
  ModerationOutput,
  ModerationParams,
  TaskOutput,
  TaskParams,
} from '../../../../domain/models/inference-backend.port.js';
import type { ProbeTarget, UpstreamAttempt, UpstreamProtocol, UpstreamProtocolDeps, UpstreamProtocolEntry } from '../../protocol.js';
import { UsageCounter } from '../../usage-count.js';
import { UpstreamClient } from '../../http-client.js';
import { targetOf, upstreamName, type HttpEndpoint, type OpenAIOperation } from '../../endpoint.js';
import { upstreamProtocolError } from '../../openai-errors.js';
import { openaiEndpoint } from './endpoint.js';
import { chatBody, completionBody, embeddingBody, moderationBody, taskBody } from './map-request.js';
import { readChatCompletion, readCompletion, readEmbeddings, readModerations } from './map-response.js';
import { probeModels } from '../../models-probe.js';
import { checkDeployment } from './check.js';
import { upstreamStreamEvents } from './stream.js';
import { engineTokenize } from './tokenize.js';

const header = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? (value[0] ?? null) : (value ?? null));

export class OpenAIProtocol implements UpstreamProtocol {
  readonly #client: UpstreamClient;
  readonly #usage: UsageCounter;
  readonly #logger: Logger;

  /** `endpoint`: where each operation goes and how it is authenticated (another protocol of the OpenAI format, Azure's, passes its own). */
  constructor(
    deps: UpstreamProtocolDeps,
    private readonly endpoint: HttpEndpoint = openaiEndpoint,
  ) {
    this.#client = new UpstreamClient(endpoint.errorOf);
    this.#usage = new UsageCounter(deps.tokens, deps.logger);
    this.#logger = deps.logger;
  }

  /** POSTs one operation to the deployment and parses its JSON answer. */
  #post(operation: OpenAIOperation, at: UpstreamAttempt, body: unknown, params: ChatParams | CompletionParams | TaskParams | EmbeddingParams | ModerationParams) {
    const path = this.endpoint.path(operation, at.deployment, upstreamName(at.model, at.deployment));
    return this.#client.postJson<unknown>(targetOf(at.model, at.deployment, this.endpoint), path, body, params);
  }

  #stream(operation: OpenAIOperation, at: UpstreamAttempt) {
    return { target: targetOf(at.model, at.deployment, this.endpoint), path: this.endpoint.path(operation, at.deployment, upstreamName(at.model, at.deployment)) };
  }

  async chat(params: ChatParams, at: UpstreamAttempt): Promise<ChatOutput> {
    const { model, deployment } = at;
    const body = chatBody(params, model, upstreamName(model, deployment), false);
    const answer = await this.#post('/chat/completions', at, body, params);
    const chat = readChatCompletion(answer.body);
    if (!chat) throw upstreamProtocolError(model.id, 'the answer has no choices');
    const usage = chat.usage ?? (await this.#usage.chat(params, model, chat.content + (chat.reasoning ?? '')));
    // Spelled out: on Node 20 a literal that spreads and then adds properties takes V8's slow path.
    const output: ChatOutput = {
      content: chat.content,
      reasoning: chat.reasoning,
      finishReason: chat.finishReason,
      usage,
      upstreamRequestId: header(answer.headers['x-request-id']),
      carried: chat.carried,
    };
    if (chat.logprobs) output.logprobs = chat.logprobs;
    return output;
  }

  chatStream(params: ChatParams, at: UpstreamAttempt): AsyncGenerator<ChatStreamEvent> {
    const { model, deployment } = at;
    return upstreamStreamEvents(this.#client, params, model, {
      ...this.#stream('/chat/completions', at),
      body: chatBody(params, model, upstreamName(model, deployment), true),
      count: (produced) => this.#usage.chat(params, model, produced),
    });
  }

  async complete(params: CompletionParams, at: UpstreamAttempt): Promise<CompletionOutput> {
    const { model, deployment } = at;
    const body = completionBody(params, model, upstreamName(model, deployment), false);
    const answer = await this.#post('/completions', at, body, params);
    const completion = readCompletion(answer.body);
    if (!completion) throw upstreamProtocolError(model.id, 'the answer has no choices');
    const usage = completion.usage ?? (await this.#usage.completion(params, model, completion.text));
    return { usage, carried: completion.carried };
  }

  completeStream(params: CompletionParams, at: UpstreamAttempt): AsyncGenerator<ChatStreamEvent> {
    const { model, deployment } = at;
    return upstreamStreamEvents(this.#client, params, model, {
      ...this.#stream('/completions', at),
      body: completionBody(params, model, upstreamName(model, deployment), true),
      count: (produced) => this.#usage.completion(params, model, produced),
    });
  }

  async runTask(params: TaskParams, at: UpstreamAttempt): Promise<TaskOutput> {
    const { model, deployment } = at;
    const answer = await this.#post('/chat/completions', at, taskBody(params, upstreamName(model, deployment)), params);
    const chat = readChatCompletion(answer.body);
    if (!chat) throw upstreamProtocolError(model.id, 'the answer has no choices');
    let result: unknown = chat.content;
    if (model.entry.task !== 'summarization') {
      try {
        result = JSON.parse(chat.content);
      } catch {
        throw upstreamProtocolError(model.id, 'the task result is not JSON');
      }
    }
    return { result, usage: chat.usage ?? (await this.#usage.task(model, params.input, chat.content)) };
  }

  async embed(params: EmbeddingParams, at: UpstreamAttempt): Promise<EmbeddingOutput> {
    const { model, deployment } = at;
    const answer = await this.#post('/embeddings', at, embeddingBody(params, upstreamName(model, deployment)), params);
    const parsed = readEmbeddings(answer.body, params.inputs.length);
    if (!parsed) throw upstreamProtocolError(model.id, `expected ${params.inputs.length} embeddings`);
    const usage = parsed.usage ?? { inputTokens: await this.#usage.all(model, params.inputs), outputTokens: 0 };
    return { vectors: parsed.vectors, usage };
  }

  async moderate(params: ModerationParams, at: UpstreamAttempt): Promise<ModerationOutput> {
    const { model, deployment } = at;
    const answer = await this.#post('/moderations', at, moderationBody(params, upstreamName(model, deployment)), params);
    const results = readModerations(answer.body, params.inputs.length);
    if (!results) throw upstreamProtocolError(model.id, `expected ${params.inputs.length} moderation results`);
    // Moderation endpoints report no usage; meter the inputs with the model's tokenizer.
    return { results, usage: { inputTokens: await this.#usage.all(model, params.inputs), outputTokens: 0 } };
  }

  probe = (target: ProbeTarget) => probeModels(target, target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});
  check(at: UpstreamAttempt): Promise<string | null> {
    return checkDeployment(at, this.endpoint);
  }

  /** The engine's `/tokenize` count (vLLM, SGLang, llama.cpp; tokenize.ts), or null when it has none or fails. */
  async tokenize(prompt: PromptToCount, at: UpstreamAttempt, context: EngineCountContext): Promise<number | null> {
    try {
      return await engineTokenize(this.#client, prompt, at, context, this.endpoint);
    } catch (err) {
      this.#logger.warn({ err, model: at.model.id, deployment: at.deployment.id }, 'engine token count failed; estimating');
      return null;
    }
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}

export const openaiProtocol: UpstreamProtocolEntry = { name: 'openai', create: (deps) => new OpenAIProtocol(deps) };
