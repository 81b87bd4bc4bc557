/**
 * POST /v1/responses with what is stored: `store` (the default) keeps the finished
 * response; `previous_response_id` puts the stored conversation of an earlier response
 * before this request's input; `background: true` stores the request queued and answers
 * at once, for a worker to run. The response itself is made by the ResponsesEngine (the
 * responses service), given the id to use, the earlier items and a callback for its end.
 */
import type { Caller, PayerKind, Principal } from '../identity/caller.js';
import type { ModelResolver } from '../models/model-resolver.port.js';
import type { Clock } from '../shared/clock.js';
import { toUnixSeconds } from '../shared/clock.js';
import { payerRef } from '../identity/caller.js';
import { newResponseId } from './responses.service.js';
import type { ResponseWriter } from './response-writer.port.js';
import type { ResponseInputItem, ResponsesContext, ResponsesRequest, ResponseStreamEvent } from './responses.types.js';
import type { ResponseItem, ResponseOwner, ResponseStatus, ResponseStore } from './response-store.port.js';
import { conversationOf, inputItemsOf } from './stored-items.js';
import type { ResponseSession } from './response-session.js';
import {
  backgroundNeedsStore,
  backgroundNotForCaller,
  backgroundNotStreamed,
  previousResponseNotFound,
  previousResponseRunning,
} from './stored-errors.js';

/** What makes a response: the responses service (responses.service.ts), opened once the engine answered. */
export interface ResponsesEngine {
  open(caller: Caller, request: ResponsesRequest, context: ResponsesContext): Promise<AsyncIterable<ResponseStreamEvent>>;
}

export interface StoredResponsesDeps {
  engine: ResponsesEngine;
  /** The Responses wire's writer: the object a queued background response answers with. */
  writer: Pick<ResponseWriter, 'queued'>;
  store: ResponseStore;
  models: ModelResolver;
  clock: Clock;
  /** How long a stored response is kept. */
  retentionMs: number;
  /** Whether a worker can meter a run paid by a payer of this kind. */
  runsInBackground(kind: PayerKind): boolean;
}

interface Turn {
  id: string;
  owner: ResponseOwner;
  store: boolean;
  background: boolean;
  priorItems: ResponseItem[];
  inputItems: ResponseItem[];
  createdAtMs: number;
}

/**
 * The chain a turn belongs to, for session affinity: the id of the chain's first item,
 * made when its root response was created and carried by every continuation's
 * conversation, so every turn of a `previous_response_id` chain names the same root.
 */
const chainOf = (turn: Turn): string | undefined => (turn.priorItems[0] ?? turn.inputItems[0])?.id;

export const ownerOf = (principal: Principal): ResponseOwner => ({ projectId: principal.projectId, subject: principal.subject ?? '' });

export class StoredResponsesService {
  readonly #queued = new Set<() => void>();

  constructor(private readonly deps: StoredResponsesDeps) {}

  /** `listener` is told when a background response was queued in this process (the runner looks for work at once). */
  onQueued(listener: () => void): void {
    this.#queued.add(listener);
  }

  /** The response's final object, or `queued` at once for a background one. */
  async create(caller: Caller, request: ResponsesRequest, context: ResponsesContext): Promise<Record<string, unknown>> {
    const turn = await this.#turn(caller.principal, request);
    if (turn.background) return this.#enqueue(caller.principal, request, turn, context.requestId);
    let last: ResponseStreamEvent | undefined;
    for await (const event of await this.#open(caller, request, turn, context)) last = event;
    return last!.response as Record<string, unknown>;
  }

  /** The events once the engine answered: a refusal before then is thrown, an ordinary HTTP error. */
  async open(caller: Caller, request: ResponsesRequest, context: ResponsesContext): Promise<AsyncIterable<ResponseStreamEvent>> {
    const turn = await this.#turn(caller.principal, request, context.session);
    if (turn.background) throw backgroundNotStreamed();
    return this.#open(caller, request, turn, context);
  }

  /**
   * The engine's events; the response is stored when they end, unless the engine refused
   * it before it answered (a 400 is not a response), and kept by the connection it came
   * on (a WebSocket's session) when it finished.
   */
  async #open(caller: Caller, request: ResponsesRequest, turn: Turn, context: ResponsesContext): Promise<AsyncIterable<ResponseStreamEvent>> {
    let started = false;
    const run: ResponsesContext = { ...context, responseId: turn.id, priorItems: turn.priorItems as ResponseInputItem[] };
    const chain = chainOf(turn);
    if (chain !== undefined) {
      run.affinity = { ...request.affinity, chain };
      caller.story?.chain(chain);
    }
    const { session } = context;
    if (turn.store || session) {
      run.onSettled = async (resource) => {
        if (!started) return;
        if (session) this.#keep(session, turn, resource);
        if (turn.store) await this.#save(turn, resource);
      };
    }
    const events = await this.deps.engine.open(caller, request, run);
    started = true;
    return events;
  }

  async #turn(principal: Principal, request: ResponsesRequest, session?: ResponseSession): Promise<Turn> {
    const { store, background } = request;
    if (background && !store) throw backgroundNeedsStore();
    const owner = ownerOf(principal);
    const createdAtMs = this.deps.clock.nowMs();
    const previous = request.previousResponseId;
    const priorItems = previous === null ? [] : (session?.conversation(owner, previous) ?? (await this.#conversation(owner, previous, createdAtMs)));
    return { id: newResponseId(), owner, store, background, priorItems, inputItems: inputItemsOf(request.input), createdAtMs };
  }

  async #conversation(owner: ResponseOwner, id: string, nowMs: number): Promise<ResponseItem[]> {
    const previous = await this.deps.store.find(owner, id, nowMs);
    if (!previous) throw previousResponseNotFound(id);
    if (previous.conversation === null) throw previousResponseRunning(id, previous.status);
    return previous.conversation;
  }

  /** A finished response is the one its connection may continue; one that failed or was cancelled is not. */
  #keep(session: ResponseSession, turn: Turn, resource: Record<string, unknown>): void {
    if (resource.status === 'completed' || resource.status === 'incomplete') {
      session.remember(turn.id, turn.owner, conversationOf(turn.priorItems, turn.inputItems, resource));
    } else {
      session.forget(turn.id);
    }
  }

  async #save(turn: Turn, resource: Record<string, unknown>): Promise<void> {
    await this.deps.store.insert({
      id: turn.id,
      owner: turn.owner,
      status: String(resource.status ?? 'completed') as ResponseStatus,
      resource,
      inputItems: turn.inputItems,
      conversation: conversationOf(turn.priorItems, turn.inputItems, resource),
      createdAtMs: turn.createdAtMs,
      expiresAtMs: turn.createdAtMs + this.deps.retentionMs,
    });
  }

  async #enqueue(principal: Principal, request: ResponsesRequest, turn: Turn, requestId: string): Promise<Record<string, unknown>> {
    if (request.stream) throw backgroundNotStreamed();
    if (!this.deps.runsInBackground(principal.payer.kind)) throw backgroundNotForCaller(principal.payer.kind);
    // An unknown model is refused now, not by the worker later.
    this.deps.models.require(request.model, 'responses');
    const resource = this.deps.writer.queued(request, turn.id, toUnixSeconds(turn.createdAtMs));
    await this.deps.store.insert(
      {
        id: turn.id,
        owner: turn.owner,
        status: 'queued',
        resource,
        inputItems: turn.inputItems,
        conversation: null,
        createdAtMs: turn.createdAtMs,
        expiresAtMs: turn.createdAtMs + this.deps.retentionMs,
      },
      { body: request.body, priorItems: turn.priorItems, keyId: principal.keyId, payer: payerRef(principal.payer), requestId },
    );
    for (const listener of this.#queued) listener();
    return resource;
  }
}
