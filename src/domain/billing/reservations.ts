/**
 * Credit held for calls in flight, per project, in this process's memory.
 *
 * In memory rather than as rows with an expiry: a hold lives exactly as long as the call
 * it covers, which is in this process; if the process dies the calls die with it, and so
 * do their holds, with nothing to expire or sweep. It also keeps admission off the
 * database (no write per call on the request path). The price is that replicas do not
 * see each other's holds: with N replicas a burst can admit up to N times what one
 * replica would (the README states the bound; a test checks it).
 */
export interface Hold {
  readonly projectId: string;
  readonly micros: number;
  /** Gives the held credit back. Idempotent. */
  release(): void;
}

export class ReservationBook {
  readonly #held = new Map<string, number>();

  /** Credit held for `projectId` by calls in flight. */
  heldFor(projectId: string): number {
    return this.#held.get(projectId) ?? 0;
  }

  /**
   * Holds `micros` against `balance` when it fits: the balance less what is already held
   * must stay positive and cover the hold. Synchronous, so check and hold are one step.
   */
  tryHold(projectId: string, balance: number, micros: number): Hold | null {
    const held = this.heldFor(projectId);
    const available = balance - held;
    if (available <= 0 || micros > available) return null;
    this.#held.set(projectId, held + micros);
    let released = false;
    return {
      projectId,
      micros,
      release: () => {
        if (released) return;
        released = true;
        const left = this.heldFor(projectId) - micros;
        if (left <= 0) this.#held.delete(projectId);
        else this.#held.set(projectId, left);
      },
    };
  }
}
