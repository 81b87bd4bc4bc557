/**
 * Whether each engine answers, as its protocol's probe finds (for OpenAI's,
 * `GET {base_url}/models`), remembered briefly, one probe in flight per engine. Probes
 * run only when asked (readiness, `sluice models list`, a model lookup), never on an
 * inference call, and what they find only informs: a call still tries its upstream.
 */
import type { ProbeTarget } from './protocol.js';

/** How long a finding stands before the next ask probes again. */
const REACHABLE_TTL_MS = 10_000;
const UNREACHABLE_TTL_MS = 3_000;

export type UpstreamState =
  | { kind: 'unknown' }
  | { kind: 'reachable'; checkedAtMs: number }
  | { kind: 'unreachable'; sinceMs: number; reason: string; checkedAtMs: number };

/** An engine to probe, with its protocol's probe. */
export type ProbeJob = ProbeTarget & { probe: (target: ProbeTarget) => Promise<string | null> };

export class UpstreamProbes {
  readonly #states = new Map<string, UpstreamState>();
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** What is known of `baseUrl`, without probing. */
  peek(baseUrl: string): UpstreamState {
    return this.#states.get(baseUrl) ?? { kind: 'unknown' };
  }

  /** Probes every target whose finding is stale; resolves when those probes end. */
  refresh(targets: Iterable<ProbeJob>): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const target of targets) {
      const running = this.#inFlight.get(target.baseUrl);
      if (running) pending.push(running);
      else if (this.#stale(target.baseUrl)) pending.push(this.#start(target));
    }
    return Promise.all(pending).then(() => undefined);
  }

  #stale(baseUrl: string): boolean {
    const state = this.#states.get(baseUrl);
    if (!state || state.kind === 'unknown') return true;
    const ttl = state.kind === 'reachable' ? REACHABLE_TTL_MS : UNREACHABLE_TTL_MS;
    return this.now() - state.checkedAtMs >= ttl;
  }

  #start(target: ProbeJob): Promise<void> {
    const probe = target
      .probe(target)
      .then((failure) => this.#record(target.baseUrl, failure))
      .finally(() => this.#inFlight.delete(target.baseUrl));
    this.#inFlight.set(target.baseUrl, probe);
    return probe;
  }

  #record(baseUrl: string, failure: string | null): void {
    const checkedAtMs = this.now();
    if (failure === null) {
      this.#states.set(baseUrl, { kind: 'reachable', checkedAtMs });
      return;
    }
    const previous = this.#states.get(baseUrl);
    // "Since" is the first failure after the last success.
    const sinceMs = previous?.kind === 'unreachable' ? previous.sinceMs : checkedAtMs;
    this.#states.set(baseUrl, { kind: 'unreachable', sinceMs, reason: failure, checkedAtMs });
  }
}
