/**
 * The responses made on one connection (a WebSocket on /v1/responses), kept in memory
 * while it is open: the latest one that finished, so the next request on the connection
 * may continue it by `previous_response_id` whether or not it was stored (`store: false`
 * included). Only the latest is kept, as OpenAI's WebSocket mode keeps it: an earlier id
 * is looked up among the stored responses, and a response that failed or was cancelled
 * is forgotten, so its id continues nothing on this connection.
 */
import type { ResponseItem, ResponseOwner } from './response-store.port.js';

interface Remembered {
  id: string;
  owner: ResponseOwner;
  conversation: ResponseItem[];
}

const sameOwner = (a: ResponseOwner, b: ResponseOwner): boolean => a.projectId === b.projectId && a.subject === b.subject;

export class ResponseSession {
  #latest: Remembered | null = null;

  /** The conversation a continuation of `id` starts from, when `id` is this connection's latest response and `owner`'s. */
  conversation(owner: ResponseOwner, id: string): ResponseItem[] | null {
    const latest = this.#latest;
    return latest !== null && latest.id === id && sameOwner(latest.owner, owner) ? latest.conversation : null;
  }

  /** `id` finished: it is the response a continuation on this connection may name. */
  remember(id: string, owner: ResponseOwner, conversation: ResponseItem[]): void {
    this.#latest = { id, owner, conversation };
  }

  /** `id` did not finish (or a continuation of it failed): it continues nothing here any more. */
  forget(id: string): void {
    if (this.#latest?.id === id) this.#latest = null;
  }
}
