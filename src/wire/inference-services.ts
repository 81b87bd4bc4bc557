/**
 * The inference services, built once by the composition and shared by routes, MCP and
 * workers. Chat completions, legacy completions and Responses share one chat call
 * (domain/completions/chat-call.ts): each is its wire's mapper and writer around it.
 */
import { ChatCall, type InferenceServiceDeps } from '../domain/completions/chat-call.js';
import { EmbeddingsService } from '../domain/completions/embeddings.service.js';
import { ModerationsService } from '../domain/completions/moderations.service.js';
import { ResponsesService, type ResponsesServiceDeps } from '../domain/responses/responses.service.js';
import { ChatCompletionsService } from './chat-completions/service.js';
import { CompletionsService } from './completions/service.js';
import { responsesWriter } from './responses/writer.js';
import { resolverTokenCounter, type PromptTokenCounter } from '../domain/completions/prompt-tokens.js';
import { PromptCounter } from '../domain/completions/prompt-counter.js';
import { DEFAULT_PROMPT_HYGIENE } from '../domain/completions/prompt-hygiene.js';
import { MessagesService } from './messages/service.js';
import type { ServerToolPolicy } from './messages/mapper.js';
import { ThinkingSigner } from './messages/thinking-signature.js';

/** The Messages wire's settings (config `messages`). */
export interface MessagesSettings {
  /** Server tools no engine here runs: dropped (named in a header) or refused. */
  serverTools: ServerToolPolicy;
  /** The secrets thinking blocks' signatures are made with (the server's reasoning secrets), read at the first signature. */
  thinkingSecrets: () => readonly string[];
  /** Counts a stream's input for `message_start` (default: the model's tokenizer, else the estimate; never the engine). */
  counter?: PromptTokenCounter;
}

export interface InferenceServices {
  /** The one chat call: what a chat-shaped wire's run and open go through. */
  chat: ChatCall;
  chatCompletions: ChatCompletionsService;
  completions: CompletionsService;
  responses: ResponsesService;
  embeddings: EmbeddingsService;
  moderations: ModerationsService;
  messages: MessagesService;
}

/** The Responses service's settings: what becomes of hosted tools, and the seal of carried reasoning. */
export type ResponsesSettings = Pick<ResponsesServiceDeps, 'hostedTools' | 'reasoning'>;

export function createInferenceServices(deps: InferenceServiceDeps, responses: ResponsesSettings, messages: MessagesSettings): InferenceServices {
  const chat = new ChatCall(deps);
  return {
    chat,
    chatCompletions: new ChatCompletionsService({ chat, clock: deps.clock }),
    completions: new CompletionsService({ chat, registry: deps.registry, clock: deps.clock }),
    responses: new ResponsesService({ chat, writer: responsesWriter, clock: deps.clock, logger: deps.logger, ...responses }),
    embeddings: new EmbeddingsService(deps),
    moderations: new ModerationsService(deps),
    messages: new MessagesService({
      chat,
      registry: deps.registry,
      counter: messages.counter ?? resolverTokenCounter(deps.registry),
      promptCounter: new PromptCounter(deps.registry),
      hygiene: deps.hygiene ?? DEFAULT_PROMPT_HYGIENE,
      signer: new ThinkingSigner(messages.thinkingSecrets),
      serverTools: messages.serverTools,
    }),
  };
}

export type { InferenceServiceDeps };
