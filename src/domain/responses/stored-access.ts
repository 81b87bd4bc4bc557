/**
 * What the retrieval routes do with stored responses: retrieve, delete, list a turn's
 * input items, cancel a background response, and replay a background response's events
 * from a sequence number, then follow them until it ends. Every call is scoped to the
 * caller's project and subject: another tenant's id is not found.
 */
import type { Principal } from '../identity/caller.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/pagination.js';
import { onAbort } from '../shared/abort.js';
import type { BackgroundQueue, InputItemsQuery, ResponseItem, ResponseStore, StoredResponse } from './response-store.port.js';
import { ownerOf } from './stored-responses.js';
import { cannotCancelEnded, cannotCancelSynchronous, cannotDeleteRunning, onlyBackgroundStreams, responseNotFound } from './stored-errors.js';

export interface StoredAccessDeps {
  store: ResponseStore;
  queue: BackgroundQueue;
  clock: Clock;
  /** How often a replay that caught up looks for new events. */
  followIntervalMs?: number;
}

const EVENTS_PAGE = 100;

export class StoredResponsesAccess {
  readonly #cancelled = new Set<(id: string) => void>();

  constructor(private readonly deps: StoredAccessDeps) {}

  /** `listener` is told when a running background response was cancelled in this process (its runner stops it at once). */
  onCancelled(listener: (id: string) => void): void {
    this.#cancelled.add(listener);
  }

  async #find(principal: Principal, id: string): Promise<StoredResponse> {
    const found = await this.deps.store.find(ownerOf(principal), id, this.deps.clock.nowMs());
    if (!found) throw responseNotFound(id);
    return found;
  }

  async retrieve(principal: Principal, id: string): Promise<Record<string, unknown>> {
    return (await this.#find(principal, id)).resource;
  }

  async delete(principal: Principal, id: string): Promise<{ id: string; object: 'response.deleted'; deleted: true }> {
    const found = await this.#find(principal, id);
    if (found.background && (found.status === 'queued' || found.status === 'in_progress')) throw cannotDeleteRunning();
    if (!(await this.deps.store.delete(ownerOf(principal), id, this.deps.clock.nowMs()))) throw responseNotFound(id);
    return { id, object: 'response.deleted', deleted: true };
  }

  async inputItems(principal: Principal, id: string, query: InputItemsQuery): Promise<Page<ResponseItem>> {
    const page = await this.deps.store.inputItems(ownerOf(principal), id, query, this.deps.clock.nowMs());
    if (!page) throw responseNotFound(id);
    return page;
  }

  /** Cancels a queued or running background response; cancelling a cancelled one again answers it as it is. */
  async cancel(principal: Principal, id: string): Promise<Record<string, unknown>> {
    const cancelled = await this.deps.queue.cancel(ownerOf(principal), id, this.deps.clock.nowMs());
    if (cancelled) {
      if (cancelled.running) for (const listener of this.#cancelled) listener(id);
      return cancelled.resource;
    }
    const found = await this.#find(principal, id);
    if (!found.background) throw cannotCancelSynchronous();
    if (found.status === 'cancelled') return found.resource;
    throw cannotCancelEnded(found.status);
  }

  /**
   * The events of a background response after `startingAfter` (all when null), then
   * those its run appends, until the run has settled. Checked before the first event:
   * a response that is not found, or was not run in the background, is refused.
   */
  async replay(principal: Principal, id: string, startingAfter: number | null, signal: AbortSignal): Promise<AsyncIterable<Record<string, unknown>>> {
    const found = await this.#find(principal, id);
    if (!found.background) throw onlyBackgroundStreams();
    return this.#follow(id, startingAfter ?? -1, signal);
  }

  async *#follow(id: string, startingAfter: number, signal: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    let after = startingAfter;
    while (!signal.aborted) {
      // Read before draining: events are written with the settlement, so once settled is
      // seen, the drain that follows reads every event there will be.
      const progress = await this.deps.queue.progress(id);
      for (;;) {
        const events = await this.deps.queue.eventsAfter(id, after, EVENTS_PAGE);
        for (const { seq, event } of events) {
          after = seq;
          yield event;
        }
        if (events.length < EVENTS_PAGE) break;
      }
      if (!progress || progress.settled) return;
      await this.#pause(signal);
    }
  }

  #pause(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(() => {
        stop();
        resolve();
      }, this.deps.followIntervalMs ?? 100);
      const stop = onAbort(signal, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
