/** A clock tests move by hand: real time plus an offset, so leases and timers still advance. */
import type { Clock } from '../../../../src/domain/shared/clock.js';
import type { Assembly } from '../../../../src/composition/features.js';
import type { Janitor } from '../../../../src/worker/janitor.js';

export class TestClock implements Clock {
  #offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.#offsetMs;
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The process's janitor, to run a pass on demand. */
export const janitorOf = (assembly: Assembly): Janitor => assembly.workers.find((w) => w.name === 'janitor') as Janitor;
