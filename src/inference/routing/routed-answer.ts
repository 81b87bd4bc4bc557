/**
 * What the router hands back for a call it holds a deployment for (a stream, until it
 * ends): the answer, who served it, and the release of the hold.
 */
import type { Deployment } from '../../config/schema.js';
import type { ServedCall } from '../../domain/models/inference-backend.port.js';

/** Which model and deployment answered a call (the domain's ServedCall); `fallback` when it is not the model the caller named. */
export type ServedBy = ServedCall;

export interface Routed<T> {
  value: T;
  served: ServedBy;
  /** Ends the call's hold on its deployment (in flight, concurrency slot); once. */
  release(): void;
}

/** An answer and the hold on its deployment: a class, not a closure per call, as every call makes one. */
export class Answer<T> implements Routed<T> {
  #deployment: Deployment | null;

  constructor(
    readonly value: T,
    readonly served: ServedBy,
    deployment: Deployment,
    private readonly leave: (deployment: Deployment) => void,
  ) {
    this.#deployment = deployment;
  }

  release(): void {
    const deployment = this.#deployment;
    if (deployment === null) return;
    this.#deployment = null;
    this.leave(deployment);
  }
}
