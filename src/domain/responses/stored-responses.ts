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
import { randomString } from '../shared/ids.js';
import type { ResponsesRequestBody } from '../../wire/responses/body.js';
import { payerRef } from '../identity/caller.js';
import { queuedResource } from './background-resource.js';
import type { ResponseInputItem, ResponsesContext, ResponseStreamEvent } from './responses.types.js';
import type { ResponseItem, ResponseOwner, ResponseStatus, ResponseStore } from './response-store.port.js';
import { conversationOf, inputItemsOf } from './stored-items.js';
import { replayed } from './responses.service.js';
import {
  backgroundNeedsStore,
  backgroundNotForCaller,
  backgroundNotStreamed,
  previousResponseNotFound,
  previousResponseRunning,
} from './stored-errors.js';

/** What makes a response: the responses service's events (responses.service.ts). */
export interface ResponsesEngine {
  events(caller: Caller, body: ResponsesRequestBody, context: ResponsesContext): AsyncIterable<ResponseStreamEvent>;
}

export interface StoredResponsesDeps {
  engine: ResponsesEngine;
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

export const ownerOf = (principal: Principal): ResponseOwner => ({ projectId: principal.projectId, subject: principal.subject ?? '' });

export const newResponseId = (): string => `resp_${randomString(24, 'hex')}`;

export class StoredResponsesService {
  readonly #queued = new Set<() => void>();

  constructor(private readonly deps: StoredResponsesDeps) {}

  /** `listener` is told when a background response was queued in this process (the runner looks for work at once). */
  onQueued(listener: () => void): void {
    this.#queued.add(listener);
  }

  /** The response's final object, or `queued` at once for a background one. */
  async create(caller: Caller, body: ResponsesRequestBody, context: ResponsesContext): Promise<Record<string, unknown>> {
    const turn = await this.#turn(caller.principal, body);
    if (turn.background) return this.#enqueue(caller.principal, body, turn, context.requestId);
    let last: ResponseStreamEvent | undefined;
    for await (const event of this.#run(caller, body, turn, context)) last = event;
    return last!.response as Record<string, unknown>;
  }

  /** The events once the first is ready: a refusal before it is thrown, an ordinary HTTP error. */
  async open(caller: Caller, body: ResponsesRequestBody, context: ResponsesContext): Promise<AsyncIterable<ResponseStreamEvent>> {
    const turn = await this.#turn(caller.principal, body);
    if (turn.background) throw backgroundNotStreamed();
    const events = this.#run(caller, body, turn, context);
    const first = await events.next();
    return replayed(first, events);
  }

  /**
   * The engine's events; the response is stored when it ends, unless the engine refused
   * it before its first event (a 400 is not a response).
   */
  async *#run(caller: Caller, body: ResponsesRequestBody, turn: Turn, context: ResponsesContext): AsyncGenerator<ResponseStreamEvent> {
    let started = false;
    const run: ResponsesContext = { ...context, responseId: turn.id, priorItems: turn.priorItems as ResponseInputItem[] };
    if (turn.store) run.onSettled = async (resource) => (started ? this.#save(turn, resource) : undefined);
    for await (const event of this.deps.engine.events(caller, body, run)) {
      started = true;
      yield event;
    }
  }

  async #turn(principal: Principal, body: ResponsesRequestBody): Promise<Turn> {
    const store = body.store !== false;
    const background = body.background === true;
    if (background && !store) throw backgroundNeedsStore();
    const owner = ownerOf(principal);
    const createdAtMs = this.deps.clock.nowMs();
    const previous = body.previous_response_id;
    const priorItems = typeof previous === 'string' ? await this.#conversation(owner, previous, createdAtMs) : [];
    return { id: newResponseId(), owner, store, background, priorItems, inputItems: inputItemsOf(body.input), createdAtMs };
  }

  async #conversation(owner: ResponseOwner, id: string, nowMs: number): Promise<ResponseItem[]> {
    const previous = await this.deps.store.find(owner, id, nowMs);
    if (!previous) throw previousResponseNotFound(id);
    if (previous.conversation === null) throw previousResponseRunning(id, previous.status);
    return previous.conversation;
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

  async #enqueue(principal: Principal, body: ResponsesRequestBody, turn: Turn, requestId: string): Promise<Record<string, unknown>> {
    if (body.stream === true) throw backgroundNotStreamed();
    if (!this.deps.runsInBackground(principal.payer.kind)) throw backgroundNotForCaller(principal.payer.kind);
    // An unknown model is refused now, not by the worker later.
    this.deps.models.require(body.model, 'responses');
    const resource = queuedResource(turn.id, body, toUnixSeconds(turn.createdAtMs));
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
      { body: body as unknown as Record<string, unknown>, priorItems: turn.priorItems, keyId: principal.keyId, payer: payerRef(principal.payer), requestId },
    );
    for (const listener of this.#queued) listener();
    return resource;
  }
}
