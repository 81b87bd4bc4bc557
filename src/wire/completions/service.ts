/**
 * POST /v1/completions, the legacy text route, over the domain's one chat call: the body
 * mapped to a completion request (mapper.ts), its engine call run or opened by the
 * ChatCall (held, settled and released as chat is), and written as `text_completion`
 * objects (writer.ts).
 */
import type { Caller } from '../../domain/identity/caller.js';
import type { Clock } from '../../domain/shared/clock.js';
import { toUnixSeconds } from '../../domain/shared/clock.js';
import type { ModelResolver } from '../../domain/models/model-resolver.port.js';
import type { ChatCall } from '../../domain/completions/chat-call.js';
import { COMPLETIONS_ROUTE, completionCallOf } from '../../domain/completions/completion-call.js';
import type { CompletionRequestBody } from './body.js';
import type { ChatCompletionsContext } from '../chat-completions/service.js';
import { completionRequestOf } from './mapper.js';
import { CompletionChunkWriter, newCompletionId, textCompletionWire } from './writer.js';

export { COMPLETIONS_ROUTE };

type Json = Record<string, unknown>;

const originOf = (context: ChatCompletionsContext) => ({ route: context.route ?? COMPLETIONS_ROUTE, requestId: context.requestId });

export class CompletionsService {
  constructor(private readonly deps: { chat: ChatCall; registry: ModelResolver; clock: Clock }) {}

  async create(caller: Caller, body: CompletionRequestBody, context: ChatCompletionsContext): Promise<Json> {
    const call = await completionCallOf(this.deps.registry, completionRequestOf(body), originOf(context), false);
    const { result, model } = await this.deps.chat.run(caller, call, context);
    return textCompletionWire(newCompletionId(), this.#now(), model, result.carried, result.usage);
  }

  /** Starts a streamed completion once the engine produced its first event; iterate it for `text_completion` chunks. */
  async openStream(caller: Caller, body: CompletionRequestBody, context: ChatCompletionsContext): Promise<AsyncIterable<Json>> {
    const request = completionRequestOf(body);
    const call = await completionCallOf(this.deps.registry, request, originOf(context), true);
    const opened = await this.deps.chat.open(caller, call, context);
    const writer = new CompletionChunkWriter(newCompletionId(), this.#now(), opened.model, request.includeUsage);
    return opened.written((event) => writer.event(event));
  }

  #now(): number {
    return toUnixSeconds(this.deps.clock.nowMs());
  }
}
