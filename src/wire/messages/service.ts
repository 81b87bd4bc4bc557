/**
 * POST /v1/messages and /v1/messages/count_tokens over the domain's one chat call: the body
 * mapped to a chat conversation (mapper.ts), run or opened by the ChatCall (admission,
 * hold, settlement and the usage record, as every chat-shaped wire), and written as
 * Anthropic's message or its stream of events (writer.ts). count_tokens counts what the
 * model would see through the prompt counter port, and is never metered.
 */
import type { Caller } from '../../domain/identity/caller.js';
import type { ChatCall } from '../../domain/completions/chat-call.js';
import { conversationOf } from '../../domain/completions/chat-request.js';
import { promptTextOf, type PromptTokenCounter } from '../../domain/completions/prompt-tokens.js';
import type { PromptCounter } from '../../domain/completions/prompt-counter.js';
import { hygienicMessages, type PromptHygiene } from '../../domain/completions/prompt-hygiene.js';
import type { ModelResolver } from '../../domain/models/model-resolver.port.js';
import type { ModelSpec } from '../../domain/models/model-spec.types.js';
import type { WireCallContext } from '../wire-format.js';
import type { CountTokensRequestBody, MessagesRequestBody } from './body.js';
import { foreignSignature, messagesCallOf, messagesConversationOf, referencedTools, toolsOf, type MessagesCall, type ServerToolPolicy } from './mapper.js';
import type { ThinkingSigner } from './thinking-signature.js';
import { MessageWriter, messageStart, messageWire, newMessageId } from './writer.js';

type Json = Record<string, unknown>;

/** Names the server tools a request sent that no engine here runs, left out of the call (as the Responses wire names its hosted tools). */
export { DROPPED_TOOLS_HEADER } from '../../domain/responses/responses.service.js';
import { DROPPED_TOOLS_HEADER } from '../../domain/responses/responses.service.js';
/** How count_tokens counted: `tokenizer`, `engine` or `estimate`. */
export const TOKEN_COUNT_METHOD_HEADER = 'x-sluice-token-count-method';

/** Silence from the engine this long, mid-stream, sends a `ping`. */
const PING_AFTER_MS = 5_000;

export interface MessagesServiceDeps {
  chat: ChatCall;
  registry: Pick<ModelResolver, 'require'>;
  /** Counts a stream's input for `message_start`, before the engine runs: in process only (no engine round trip). */
  counter: PromptTokenCounter;
  /** Counts count_tokens' prompts: the tokenizer, else the engine's `/tokenize`, else the estimate. */
  promptCounter: Pick<PromptCounter, 'countPrompt'>;
  /** What is removed from a prompt before an engine sees it, so count_tokens counts what the engine will read. */
  hygiene: PromptHygiene;
  signer: ThinkingSigner;
  serverTools: ServerToolPolicy;
}

/**
 * A thinking block signed by someone else (the provider that answered an earlier turn)
 * can only go back to that provider: it is refused, as Anthropic refuses a modified
 * block, unless the model is served by an anthropic-protocol upstream. (When that model
 * falls back to another protocol, the fallback's engine leaves the blocks out.)
 */
function refuseForeignThinking(model: ModelSpec, foreignSignatures: readonly string[]): void {
  if (foreignSignatures.length > 0 && model.binding.upstream?.protocol !== 'anthropic') throw foreignSignature(foreignSignatures[0]!);
}

const PING: Json = { type: 'ping' };
const SILENCE = Symbol('silence');

/** The opening events, then each engine event's frames, with a `ping` whenever the engine is silent for PING_AFTER_MS. */
async function* withPings(opening: Json[], frames: AsyncIterable<Json[]>): AsyncGenerator<Json> {
  yield* opening;
  const iterator = frames[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<Json[]>> | null = null;
  try {
    for (;;) {
      pending ??= iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const silence = new Promise<typeof SILENCE>((resolve) => {
        timer = setTimeout(resolve, PING_AFTER_MS, SILENCE);
      });
      const step = await Promise.race([pending, silence]);
      clearTimeout(timer);
      if (step === SILENCE) {
        yield PING;
        continue;
      }
      pending = null;
      if (step.done) return;
      yield* step.value;
    }
  } finally {
    // Stopped while the engine was silent: its next event (or failure) is no one's now.
    pending?.catch(() => {});
    await iterator.return?.();
  }
}

/** Anthropic's `thinking.display`: `omitted` leaves thinking text out of the answer; otherwise it is shown. */
const thinkingDisplayOf = (body: MessagesRequestBody): 'summarized' | 'omitted' => (body.thinking?.display === 'omitted' ? 'omitted' : 'summarized');

export class MessagesService {
  constructor(private readonly deps: MessagesServiceDeps) {}

  async create(caller: Caller, body: MessagesRequestBody, context: WireCallContext): Promise<Json> {
    const { call, engine } = await this.#prepare(caller, body, context, false);
    const { result } = await this.deps.chat.run(caller, engine, context);
    const writer = new MessageWriter(this.deps.signer, call.stopSequences, thinkingDisplayOf(body));
    writer.readWhole(result);
    return messageWire(newMessageId(), body.model, writer, result.usage);
  }

  /** Resolves once the engine produced its first event: `message_start` (with the input counted), a `ping`, then the blocks. */
  async open(caller: Caller, body: MessagesRequestBody, context: WireCallContext): Promise<AsyncIterable<Json>> {
    const { call, engine } = await this.#prepare(caller, body, context, true);
    const counted = await this.deps.counter.count(engine.model, promptTextOf(call.request.messages, call.tools));
    const opened = await this.deps.chat.open(caller, engine, context);
    const writer = new MessageWriter(this.deps.signer, call.stopSequences, thinkingDisplayOf(body));
    const frames = opened.written((event) => {
      writer.readStream(event);
      return writer.drain();
    });
    return withPings([messageStart(newMessageId(), body.model, counted.tokens), PING], frames);
  }

  /** What the model would see of this conversation, counted; free (never admitted nor recorded). */
  async countTokens(caller: Caller, body: CountTokensRequestBody, context: WireCallContext): Promise<Json> {
    const model = this.deps.registry.require(body.model, 'chat');
    const { tools } = toolsOf(body.tools, this.deps.serverTools, referencedTools(body.messages, body.tools));
    const conversation = messagesConversationOf(body.system, body.messages, this.deps.signer);
    refuseForeignThinking(model, conversation.foreignSignatures);
    const messages = hygienicMessages(this.deps.hygiene, model, conversation.messages);
    const prompt = { messages, tools, text: promptTextOf(messages, tools) };
    const counted = await this.deps.promptCounter.countPrompt(model, prompt, { requestId: context.requestId, signal: context.signal });
    caller.reply?.set({ [TOKEN_COUNT_METHOD_HEADER]: counted.method });
    return { input_tokens: counted.tokens };
  }

  async #prepare(caller: Caller, body: MessagesRequestBody, context: WireCallContext, streaming: boolean) {
    // max_tokens is held at the model's own output limit (agents ask for 32k to 64k).
    const model = this.deps.registry.require(body.model, 'chat');
    const call: MessagesCall = messagesCallOf(body, this.deps, Math.min(body.max_tokens, model.maxOutputTokens), context.sessionId);
    refuseForeignThinking(model, call.foreignSignatures);
    if (call.dropped.length > 0) caller.reply?.set({ [DROPPED_TOOLS_HEADER]: call.dropped.join(', ') });
    const origin = { route: context.route, requestId: context.requestId };
    const engine = await this.deps.chat.prepare(call.request.model, 'chat', conversationOf(call.request), streaming, origin);
    return { call, engine };
  }
}
