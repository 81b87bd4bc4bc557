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
import type { UpstreamAttempt, UpstreamProtocol, UpstreamProtocolDeps, UpstreamProtocolEntry } from '../../protocol.js';
import { UsageCounter } from '../../usage-count.js';
import { UpstreamClient } from './client.js';
import { upstreamProtocolError } from './errors.js';
import { chatBody, completionBody, embeddingBody, moderationBody, taskBody } from './map-request.js';
import { readChatCompletion, readCompletion, readEmbeddings, readModerations } from './map-response.js';
import { probeModels } from './probe.js';
import { checkDeployment } from './check.js';
import { upstreamStreamEvents } from './stream.js';
import { targetOf, upstreamName } from './target.js';
import { engineTokenize } from './tokenize.js';

const header = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? (value[0] ?? null) : (value ?? null));

export class OpenAIProtocol implements UpstreamProtocol {
  readonly #client = new UpstreamClient();
  readonly #usage: UsageCounter;
  readonly #logger: Logger;

  constructor(deps: UpstreamProtocolDeps) {
    this.#usage = new UsageCounter(deps.tokens, deps.logger);
    this.#logger = deps.logger;
  }

  async chat(params: ChatParams, { model, deployment }: UpstreamAttempt): Promise<ChatOutput> {
    const body = chatBody(params, model, upstreamName(model, deployment), false);
    const answer = await this.#client.postJson<unknown>(targetOf(model, deployment), '/chat/completions', body, params);
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

  chatStream(params: ChatParams, { model, deployment }: UpstreamAttempt): AsyncGenerator<ChatStreamEvent> {
    return upstreamStreamEvents(this.#client, params, model, deployment, {
      path: '/chat/completions',
      body: chatBody(params, model, upstreamName(model, deployment), true),
      count: (produced) => this.#usage.chat(params, model, produced),
    });
  }

  async complete(params: CompletionParams, { model, deployment }: UpstreamAttempt): Promise<CompletionOutput> {
    const body = completionBody(params, model, upstreamName(model, deployment), false);
    const answer = await this.#client.postJson<unknown>(targetOf(model, deployment), '/completions', body, params);
    const completion = readCompletion(answer.body);
    if (!completion) throw upstreamProtocolError(model.id, 'the answer has no choices');
    const usage = completion.usage ?? (await this.#usage.completion(params, model, completion.text));
    return { usage, carried: completion.carried };
  }

  completeStream(params: CompletionParams, { model, deployment }: UpstreamAttempt): AsyncGenerator<ChatStreamEvent> {
    return upstreamStreamEvents(this.#client, params, model, deployment, {
      path: '/completions',
      body: completionBody(params, model, upstreamName(model, deployment), true),
      count: (produced) => this.#usage.completion(params, model, produced),
    });
  }

  async runTask(params: TaskParams, { model, deployment }: UpstreamAttempt): Promise<TaskOutput> {
    const answer = await this.#client.postJson<unknown>(targetOf(model, deployment), '/chat/completions', taskBody(params, upstreamName(model, deployment)), params);
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

  async embed(params: EmbeddingParams, { model, deployment }: UpstreamAttempt): Promise<EmbeddingOutput> {
    const answer = await this.#client.postJson<unknown>(targetOf(model, deployment), '/embeddings', embeddingBody(params, upstreamName(model, deployment)), params);
    const parsed = readEmbeddings(answer.body, params.inputs.length);
    if (!parsed) throw upstreamProtocolError(model.id, `expected ${params.inputs.length} embeddings`);
    const usage = parsed.usage ?? { inputTokens: await this.#usage.all(model, params.inputs), outputTokens: 0 };
    return { vectors: parsed.vectors, usage };
  }

  async moderate(params: ModerationParams, { model, deployment }: UpstreamAttempt): Promise<ModerationOutput> {
    const answer = await this.#client.postJson<unknown>(targetOf(model, deployment), '/moderations', moderationBody(params, upstreamName(model, deployment)), params);
    const results = readModerations(answer.body, params.inputs.length);
    if (!results) throw upstreamProtocolError(model.id, `expected ${params.inputs.length} moderation results`);
    // Moderation endpoints report no usage; meter the inputs with the model's tokenizer.
    return { results, usage: { inputTokens: await this.#usage.all(model, params.inputs), outputTokens: 0 } };
  }

  probe = probeModels;
  check = checkDeployment;

  /** The engine's `/tokenize` count (vLLM, SGLang, llama.cpp; tokenize.ts), or null when it has none or fails. */
  async tokenize(prompt: PromptToCount, at: UpstreamAttempt, context: EngineCountContext): Promise<number | null> {
    try {
      return await engineTokenize(this.#client, prompt, at, context);
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
