/**
 * How the router picks among a model's deployments that may take a call. Each strategy
 * keeps its own per-model state and picks in O(deployments), allocating nothing.
 */
import type { Deployment, RoutingStrategy } from '../../config/schema.js';
import type { HealthBook } from './deployment-health.js';

export interface Picker {
  /** One of `candidates[0..count)`, which is never empty. */
  pick(candidates: readonly Deployment[], count: number): Deployment;
}

/**
 * Smooth weighted round robin (nginx's): each pick adds every candidate's weight to its
 * running score, takes the highest, and subtracts the total from it. Weights 3:1 give
 * a a b a, not a a a b, and a deployment left out of a pick (cooling down) keeps its score.
 */
export class SmoothWeighted implements Picker {
  readonly #score = new Map<string, number>();

  pick(candidates: readonly Deployment[], count: number): Deployment {
    if (count === 1) return candidates[0]!;
    let total = 0;
    let best: Deployment = candidates[0]!;
    let bestScore = -Infinity;
    for (let i = 0; i < count; i++) {
      const d = candidates[i]!;
      const score = (this.#score.get(d.id) ?? 0) + d.weight;
      this.#score.set(d.id, score);
      total += d.weight;
      if (score > bestScore) {
        bestScore = score;
        best = d;
      }
    }
    this.#score.set(best.id, bestScore - total);
    return best;
  }
}

/** The fewest calls in flight, on this replica plus (with Redis) the others; ties go round robin. */
export class LeastBusy implements Picker {
  #turn = 0;

  constructor(private readonly health: HealthBook) {}

  pick(candidates: readonly Deployment[], count: number): Deployment {
    if (count === 1) return candidates[0]!;
    const start = this.#turn++ % count;
    let best = candidates[start]!;
    let bestLoad = Infinity;
    for (let k = 0; k < count; k++) {
      const d = candidates[(start + k) % count]!;
      const h = this.health.of(d);
      // Relative to the weight: a deployment of weight 2 is as busy as one of weight 1 at half its calls.
      const load = (h.inFlight + h.remoteInFlight) / d.weight;
      if (load < bestLoad) {
        bestLoad = load;
        best = d;
      }
    }
    return best;
  }
}

/** One call in this many goes to a deployment other than the fastest, so a recovered one is noticed. */
const EXPLORE_EVERY = 10;

/** The lowest recent time to first byte; a deployment never measured is tried first, and some calls explore. */
export class LowestLatency implements Picker {
  #calls = 0;

  constructor(private readonly health: HealthBook) {}

  pick(candidates: readonly Deployment[], count: number): Deployment {
    if (count === 1) return candidates[0]!;
    this.#calls++;
    if (this.#calls % EXPLORE_EVERY === 0) return candidates[Math.floor(Math.random() * count)]!;
    let best = candidates[0]!;
    let bestMs = Infinity;
    for (let i = 0; i < count; i++) {
      const d = candidates[i]!;
      const ms = this.health.of(d).ttfbMs;
      if (ms === null) return d;
      if (ms < bestMs) {
        bestMs = ms;
        best = d;
      }
    }
    return best;
  }
}

export function pickerFor(strategy: RoutingStrategy, health: HealthBook): Picker {
  if (strategy === 'least_busy') return new LeastBusy(health);
  if (strategy === 'latency') return new LowestLatency(health);
  return new SmoothWeighted();
}
