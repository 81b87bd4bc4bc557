/**
 * The loop every lease-based background worker runs (batch shards, background
 * responses): claim work by lease while there is room, run each claimed item, renew the
 * leases of the items in hand every third of the lease, tell a run whose lease was lost,
 * and idle between polls until the poll interval passes or wake() is called. stop()
 * drains: no new claims; runs in flight finish, and once `drainMs` has passed the
 * owner's drain action tells them to stop (their leases are then given back by the runs).
 */
import type { Logger } from 'pino';

export interface LeasedRun<Run> {
  run: Run;
  /** Settles when the run has ended, whatever its outcome (errors handled by the owner). */
  done: Promise<void>;
}

export interface LeaseLoopSpec<Job, Run> {
  leaseMs: number;
  /** Runs in flight in this process. */
  maxRuns: number;
  pollIntervalMs: number;
  logger: Logger;
  /** Log messages: a failed poll, a failed renewal. */
  messages: { pollFailed: string; renewalFailed: string };
  /** Work done before each turn's claims; true when more is waiting (the turn skips its idle wait). */
  beforeClaims?: () => Promise<boolean>;
  claim(): Promise<Job | undefined>;
  idOf(job: Job): string;
  begin(job: Job): LeasedRun<Run>;
  /** Extends the leases of these ids; answers the ids still held. */
  renew(ids: string[]): Promise<Set<string>>;
  /** The lease of this run was lost (or its item was cancelled elsewhere). */
  lost(run: Run): void;
}

export class LeaseLoop<Job, Run> {
  readonly #runs = new Map<string, LeasedRun<Run>>();
  #stopping = false;
  #loop: Promise<void> | undefined;
  #renewal: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  /** A wake() that arrived while the loop was busy: the next idle returns at once. */
  #woken = false;

  constructor(private readonly spec: LeaseLoopSpec<Job, Run>) {}

  get stopping(): boolean {
    return this.#stopping;
  }

  /** The run of this id, if it is in flight here. */
  runOf(id: string): Run | undefined {
    return this.#runs.get(id)?.run;
  }

  /** Starts polling; false when it already runs or was stopped. */
  start(): boolean {
    if (this.#loop || this.#stopping) return false;
    this.#renewal = setInterval(() => void this.#renewLeases(), Math.max(100, this.spec.leaseMs / 3));
    this.#loop = this.#runLoop();
    return true;
  }

  /** Look for work now. */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /**
   * Stops claiming and waits for the runs in flight; after `drainMs` calls `drain` so that
   * they stop. False when the loop never started (nothing to drain).
   */
  async stop(drainMs: number, drain: (runs: Run[]) => void): Promise<boolean> {
    if (this.#stopping) return false;
    this.#stopping = true;
    if (!this.#loop) return false;
    this.wake();
    await this.#loop;
    const timer = setTimeout(() => drain([...this.#runs.values()].map((r) => r.run)), drainMs);
    await Promise.allSettled([...this.#runs.values()].map((r) => r.done));
    clearTimeout(timer);
    clearInterval(this.#renewal);
    return true;
  }

  async #runLoop(): Promise<void> {
    const { spec } = this;
    while (!this.#stopping) {
      let busy = false;
      try {
        busy = (await spec.beforeClaims?.()) ?? false;
        while (!this.#stopping && this.#runs.size < spec.maxRuns) {
          const job = await spec.claim();
          if (!job) break;
          this.#begin(job);
        }
      } catch (err) {
        spec.logger.error({ err }, spec.messages.pollFailed);
      }
      if (!busy) await this.#idle(spec.pollIntervalMs);
    }
  }

  #begin(job: Job): void {
    const id = this.spec.idOf(job);
    const leased = this.spec.begin(job);
    const done = leased.done.finally(() => {
      this.#runs.delete(id);
      this.wake();
    });
    this.#runs.set(id, { run: leased.run, done });
  }

  /** Waits for the poll interval, a wake(), or a run ending, whichever is first. */
  #idle(ms: number): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        this.#woken = false;
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  async #renewLeases(): Promise<void> {
    const ids = [...this.#runs.keys()];
    if (ids.length === 0) return;
    try {
      const kept = await this.spec.renew(ids);
      for (const id of ids) {
        const run = this.#runs.get(id)?.run;
        if (run !== undefined && !kept.has(id)) this.spec.lost(run);
      }
    } catch (err) {
      this.spec.logger.warn({ err }, this.spec.messages.renewalFailed);
    }
  }
}
