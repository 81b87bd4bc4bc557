/**
 * Credit held for calls in flight, per payer key (a project id on /v1; a seller and credit
 * holder on the storefront, storefront-meter.ts), in this process's memory.
 *
 * In memory rather than as rows with an expiry: a hold lives exactly as long as the call
 * it covers, which is in this process; if the process dies the calls die with it, and so
 * do their holds, with nothing to expire or sweep. It also keeps admission off the
 * database (no write per call on the request path). The price is that replicas do not
 * see each other's holds: with N replicas a burst can admit up to N times what one
 * replica would (docs/credits.md states the bound; a test checks it).
 *
 * A balance read that was under way when a call's debit committed may or may not include
 * that debit. Holds given back after a commit are therefore logged with an epoch, and a
 * read still counts those released after it began: it never sees neither the debit nor
 * the hold.
 *
 * A call refused only because the project's other calls hold its credit can wait for
 * them (whenReleased): every hold given back counts a release for its project and wakes
 * that project's waiters.
 */
export interface Hold {
  readonly projectId: string;
  readonly micros: number;
  /** Gives the held credit back: the call ended without charge. Idempotent. */
  release(): void;
  /** Gives the held credit back once the call's debit is committed. Idempotent. */
  settled(): void;
}

interface Released {
  epoch: number;
  projectId: string;
  micros: number;
}

export class ReservationBook {
  readonly #held = new Map<string, number>();
  /** Counts settlements; a read remembers the epoch it began in. */
  #epoch = 0;
  /** Holds released after a commit, oldest first, kept while a read begun before them is under way. */
  #released: Released[] = [];
  /** Reads under way, by the epoch they began in (insertion order is epoch order). */
  readonly #reads = new Map<number, number>();
  /** Holds given back per project (for waiters that must not miss one), and the waiters. */
  readonly #releases = new Map<string, number>();
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Credit held for `projectId` by calls in flight. */
  heldFor(projectId: string): number {
    return this.#held.get(projectId) ?? 0;
  }

  /**
   * What `balance`, read in `readEpoch`, leaves free for a new hold of `projectId`: the
   * balance less the holds in flight and those given back since the read began.
   */
  freeOf(projectId: string, balance: number, readEpoch: number): number {
    return balance - this.heldFor(projectId) - this.#releasedSince(projectId, readEpoch);
  }

  /** How many holds of `projectId` were given back so far: pass it to whenReleased(). */
  releasesOf(projectId: string): number {
    return this.#releases.get(projectId) ?? 0;
  }

  /**
   * Resolves once a hold of `projectId` is given back after `releasesOf()` returned
   * `since` (at once if one already was, or if nothing is held any more), or after
   * `timeoutMs`, whichever is first. Rejects when `signal` aborts.
   */
  whenReleased(projectId: string, since: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    if (this.releasesOf(projectId) > since || this.heldFor(projectId) === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiters = this.#waiters.get(projectId) ?? new Set<() => void>();
      this.#waiters.set(projectId, waiters);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        waiters.delete(wake);
        if (waiters.size === 0 && this.#waiters.get(projectId) === waiters) this.#waiters.delete(projectId);
      };
      const wake = () => {
        done();
        resolve();
      };
      const aborted = () => {
        done();
        reject(signal?.reason ?? new Error('aborted'));
      };
      const timer = setTimeout(wake, timeoutMs);
      waiters.add(wake);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  /** Marks a balance read as begun; pass the epoch to tryHold() and endRead(). */
  beginRead(): number {
    const epoch = this.#epoch;
    this.#reads.set(epoch, (this.#reads.get(epoch) ?? 0) + 1);
    return epoch;
  }

  endRead(epoch: number): void {
    const left = (this.#reads.get(epoch) ?? 1) - 1;
    if (left > 0) this.#reads.set(epoch, left);
    else this.#reads.delete(epoch);
    const oldest = this.#reads.keys().next();
    const keepAfter = oldest.done ? this.#epoch : oldest.value;
    let drop = 0;
    while (drop < this.#released.length && this.#released[drop]!.epoch <= keepAfter) drop++;
    if (drop > 0) this.#released = this.#released.slice(drop);
  }

  /**
   * Holds `micros` against `balance`, read in `readEpoch`, when it fits: the balance less
   * what is held must stay positive and cover the hold. Synchronous, so check and hold
   * are one step.
   */
  tryHold(projectId: string, balance: number, micros: number, readEpoch: number): Hold | null {
    const held = this.heldFor(projectId);
    const available = this.freeOf(projectId, balance, readEpoch);
    if (available <= 0 || micros > available) return null;
    this.#held.set(projectId, held + micros);
    let done = false;
    const giveBack = (afterCommit: boolean) => {
      if (done) return;
      done = true;
      const left = this.heldFor(projectId) - micros;
      if (left <= 0) this.#held.delete(projectId);
      else this.#held.set(projectId, left);
      if (afterCommit && this.#reads.size > 0) this.#released.push({ epoch: ++this.#epoch, projectId, micros });
      else if (afterCommit) this.#epoch++;
      this.#wake(projectId);
    };
    return { projectId, micros, release: () => giveBack(false), settled: () => giveBack(true) };
  }

  #wake(projectId: string): void {
    // A project with nothing held needs no count: whenReleased() returns at once for it.
    if (this.heldFor(projectId) === 0) this.#releases.delete(projectId);
    else this.#releases.set(projectId, this.releasesOf(projectId) + 1);
    const waiters = this.#waiters.get(projectId);
    if (!waiters) return;
    this.#waiters.delete(projectId);
    for (const wake of [...waiters]) wake();
  }

  #releasedSince(projectId: string, epoch: number): number {
    let micros = 0;
    for (const r of this.#released) if (r.epoch > epoch && r.projectId === projectId) micros += r.micros;
    return micros;
  }
}
