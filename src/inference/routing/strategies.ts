/**
 * How the router picks among a model's deployments that may take a call. Each strategy
 * keeps its own per-model state and picks in O(deployments), allocating nothing.
 */
import type { Deployment, RoutingStrategy } from '../../config/schema.js';
import { quickestTtfbMs, type HealthBook } from './deployment-health.js';

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

/** Times to first byte under this are noise beside queueing (and a 0 would make a deployment's calls weigh nothing). */
const MIN_TTFB_MS = 1;
/**
 * A time to first byte older than this no longer weighs a deployment's calls: one slow
 * answer (a cold start) would otherwise keep it out of every pick until the others were
 * that far behind, and its time would never be measured again.
 */
const TTFB_FRESH_MS = 10_000;

/**
 * The fewest calls in flight, on this replica plus (with Redis) the others, per unit of
 * weight; ties go round robin. While every candidate has answered in the last
 * TTFB_FRESH_MS, each count is weighed by the deployment's quickest recent time to first
 * byte, as (in flight + 1) × that time: the wait a new call can expect there. The quickest,
 * not the average: during a burst every answer's time includes its queueing, which the
 * count already stands for. Weighed by the average, a fast engine's answers slowed by a
 * loaded machine made it look only 2× quicker than a 200 ms one, and it took only two
 * calls in three of a burst. By counts alone, a burst that arrives
 * before any answer is read (kept-alive connections, a busy event loop) splits evenly
 * between a fast engine and one 40× slower, and half of it waits on the slow one; weighed,
 * the slow one takes a call only when the fast one is that far behind. Otherwise counts
 * alone decide, so a new deployment, or one not timed lately, is tried.
 */
export class LeastBusy implements Picker {
  #turn = 0;

  constructor(private readonly health: HealthBook) {}

  pick(candidates: readonly Deployment[], count: number): Deployment {
    if (count === 1) return candidates[0]!;
    const timed = this.#everyOneTimed(candidates, count);
    const start = this.#turn++ % count;
    let best = candidates[start]!;
    let bestLoad = Infinity;
    for (let k = 0; k < count; k++) {
      const d = candidates[(start + k) % count]!;
      const h = this.health.of(d);
      const calls = h.inFlight + h.remoteInFlight;
      // Relative to the weight: a deployment of weight 2 is as busy as one of weight 1 at half its calls.
      const load = (timed ? (calls + 1) * Math.max(quickestTtfbMs(h), MIN_TTFB_MS) : calls) / d.weight;
      if (load < bestLoad) {
        bestLoad = load;
        best = d;
      }
    }
    return best;
  }

  #everyOneTimed(candidates: readonly Deployment[], count: number): boolean {
    const since = this.health.now() - TTFB_FRESH_MS;
    for (let i = 0; i < count; i++) {
      const h = this.health.of(candidates[i]!);
      if (h.ttfbMs === null || h.ttfbAtMs < since) return false;
    }
    return true;
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
