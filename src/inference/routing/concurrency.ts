/**
 * `max_concurrency` per deployment: a call over the limit waits in a short FIFO queue for
 * a slot instead of overloading the engine, and is refused with 429 `server_busy` only
 * when the wait exceeds `routing.queue_timeout_ms` (and the model has no fallback to
 * spill over to: the router's choice).
 */
import type { Deployment } from '../../config/schema.js';
import { AppError } from '../../domain/shared/errors.js';
import { onAbort } from '../../domain/shared/abort.js';
import type { HealthBook } from './deployment-health.js';

interface Waiter {
  resolve(): void;
}

export class ConcurrencyGate {
  readonly #queues = new Map<string, Waiter[]>();
  /** Slots taken per deployment with a limit (deployments without one are not counted here). */
  readonly #taken = new Map<string, number>();

  constructor(
    private readonly health: HealthBook,
    private readonly queueTimeoutMs: number,
  ) {}

  full(deployment: Deployment): boolean {
    return deployment.maxConcurrency !== null && (this.#taken.get(deployment.id) ?? 0) >= deployment.maxConcurrency;
  }

  /** Takes a slot, waiting for one when the deployment is at its limit. */
  enter(deployment: Deployment, signal: AbortSignal): Promise<void> | void {
    if (deployment.maxConcurrency === null) return;
    const taken = this.#taken.get(deployment.id) ?? 0;
    if (taken < deployment.maxConcurrency) {
      this.#taken.set(deployment.id, taken + 1);
      return;
    }
    return this.#wait(deployment, signal);
  }

  /** Gives the slot back, straight to the first waiter if any. */
  leave(deployment: Deployment): void {
    if (deployment.maxConcurrency === null) return;
    const next = this.#queues.get(deployment.id)?.shift();
    if (next) next.resolve();
    else this.#taken.set(deployment.id, (this.#taken.get(deployment.id) ?? 1) - 1);
  }

  #wait(deployment: Deployment, signal: AbortSignal): Promise<void> {
    let queue = this.#queues.get(deployment.id);
    if (!queue) this.#queues.set(deployment.id, (queue = []));
    const waiters = queue;
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          stop();
          resolve();
        },
      };
      const leaveQueue = () => {
        const i = waiters.indexOf(waiter);
        if (i !== -1) waiters.splice(i, 1);
      };
      const timer = setTimeout(() => {
        leaveQueue();
        stop();
        reject(serverBusy(this.health.of(deployment).inFlight));
      }, this.queueTimeoutMs);
      const stop = onAbort(signal, (reason) => {
        clearTimeout(timer);
        leaveQueue();
        reject(reason as Error);
      });
      waiters.push(waiter);
    });
  }
}

/** The refusal of a call that waited longer than queue_timeout_ms for a slot. */
export const isServerBusy = (err: unknown): boolean => err instanceof AppError && err.code === 'server_busy';

function serverBusy(inFlight: number): AppError {
  return new AppError('rate_limit', `The model's engines are at their concurrency limit (${inFlight} calls in flight); retry shortly`, {
    code: 'server_busy',
    retryable: true,
    retryAfterSeconds: 1,
  });
}
