/**
 * The router: which deployment of a model takes a call, what happens when it fails, and
 * which model serves when none of them can. One per process, inside the openai backend,
 * so every caller of an upstream engine (the API, batch lines, the decision route's llm
 * scorer, the gateway, the storefront) is routed the same way.
 *
 * A call tries the model's deployments, each at most once, up to `retries` further
 * attempts; then its `fallbacks`, or on a context-length refusal its
 * `context_window_fallbacks`. An attempt ends, for the router, when the engine's answer
 * has started (a stream's first chunk): nothing after that is retried.
 */
import type { Config, Deployment, ModelConfig, RoutingConfig } from '../../config/schema.js';
import { AppError } from '../../domain/shared/errors.js';
import type { DeploymentStatus } from '../../domain/models/inference-backend.port.js';
import { classifyFailure } from './attempt-outcome.js';
import { ConcurrencyGate } from './concurrency.js';
import { HealthBook } from './deployment-health.js';
import type { RoutingMetrics } from '../../domain/models/routing-metrics.port.js';
import { SharedRoutingState } from './shared-state.js';
import { pickerFor, type Picker } from './strategies.js';

/** Which model and deployment answered a call; `fallback` when it is not the model the caller named. */
export interface ServedBy {
  model: ModelConfig;
  deployment: string;
  fallback: boolean;
}

export interface Routed<T> {
  value: T;
  served: ServedBy;
  /** Ends the call's hold on its deployment (in flight, concurrency slot); once. */
  release(): void;
}

/** What the router reports to Prometheus (src/observability/metrics.ts). */
export type { RoutingMetrics };

export type Attempt<T> = (model: ModelConfig, deployment: Deployment) => Promise<T>;


interface ModelRoute {
  deployments: readonly Deployment[];
  picker: Picker;
  /** Scratch space for the candidates of one pick (the hot path allocates nothing). */
  scratch: Deployment[];
}

export class Router {
  readonly health: HealthBook;
  readonly #routes = new Map<string, ModelRoute>();
  readonly #gate: ConcurrencyGate;
  readonly #shared: SharedRoutingState | null;
  readonly #settings: RoutingConfig;

  constructor(
    private readonly config: Readonly<Config>,
    private readonly metrics: RoutingMetrics | null = null,
    private readonly now: () => number = Date.now,
  ) {
    this.#settings = config.routing;
    this.health = new HealthBook(
      config.routing.cooldown,
      {
        cooled: (d, untilMs, reason) => {
          this.metrics?.cooled(d.id, reason);
          this.#shared?.publishCooldown(d, untilMs);
        },
      },
      now,
    );
    this.#gate = new ConcurrencyGate(this.health, config.routing.queueTimeoutMs);
    const all = Object.values(config.models).flatMap((m) => m.binding.deployments);
    this.#shared = config.redisUrl && all.length > 0 ? new SharedRoutingState(config.redisUrl, config.routing.redisPrefix, all, this.health) : null;
  }

  /** Runs `attempt` on the model's deployments (then its fallbacks) until one answers; its hold is released when it resolves. */
  async run<T>(model: ModelConfig, signal: AbortSignal, attempt: Attempt<T>): Promise<{ value: T; served: ServedBy }> {
    const routed = await this.open(model, signal, attempt);
    routed.release();
    return routed;
  }

  /** As run(), but the deployment stays held until release() (a stream, until it ends). */
  async open<T>(model: ModelConfig, signal: AbortSignal, attempt: Attempt<T>): Promise<Routed<T>> {
    let chain: readonly string[] = model.fallbacks;
    let next = 0;
    let current: ModelConfig = model;
    let lastError: unknown = null;
    let contextFallbacks = model.contextWindowFallbacks.length > 0;
    for (;;) {
      // With nowhere else to go, a cooldown must not turn the call away (see #tryModel).
      const lastResort = this.#nextModel(chain, next) === undefined && !(current === model && contextFallbacks);
      const outcome = await this.#tryModel(current, current !== model, signal, attempt, lastResort);
      if (outcome.routed) return outcome.routed;
      lastError = outcome.error ?? lastError;
      if (outcome.contextLength && contextFallbacks) {
        contextFallbacks = false;
        chain = model.contextWindowFallbacks;
        next = 0;
      } else if (outcome.final || outcome.contextLength) {
        throw lastError;
      }
      const found = this.#nextModel(chain, next);
      if (!found) throw lastError ?? allCoolingDown(model);
      [current, next] = [found.model, found.index + 1];
    }
  }

  /** The deployments of `model` as operators see them (no URLs). */
  states(model: ModelConfig): DeploymentStatus[] {
    const now = this.now();
    return model.binding.deployments.map((d) => {
      const h = this.health.of(d);
      const inFlight = h.inFlight + h.remoteInFlight;
      if (h.coolUntilMs > now) return { id: d.id, state: 'cooling_down', until: new Date(h.coolUntilMs).toISOString(), inFlight };
      if (h.unreachableSinceMs !== null) {
        return { id: d.id, state: 'unreachable', since: new Date(h.unreachableSinceMs).toISOString(), reason: h.unreachableReason ?? 'unreachable', inFlight };
      }
      return { id: d.id, state: 'ready', inFlight };
    });
  }

  /** Reads the other replicas' state now (status pages, tests); calls never wait for it. */
  async syncShared(): Promise<void> {
    await this.#shared?.syncNow();
  }

  async close(): Promise<void> {
    await this.#shared?.close();
  }

  #nextModel(chain: readonly string[], from: number): { model: ModelConfig; index: number } | undefined {
    for (let index = from; index < chain.length; index++) {
      const model = this.config.models[chain[index]!];
      if (model && model.binding.deployments.length > 0) return { model, index };
    }
    return undefined;
  }

  /**
   * Tries one model's deployments. `lastResort`: no fallback follows, so when every
   * deployment is cooling down the call still goes to the one that is back soonest
   * (a cooldown never turns a model with nowhere else to go into a refusal).
   */
  async #tryModel<T>(model: ModelConfig, fallback: boolean, signal: AbortSignal, attempt: Attempt<T>, lastResort: boolean) {
    const route = this.#route(model);
    const attempts = Math.min(this.#settings.retries + 1, route.deployments.length);
    let tried: Deployment[] | null = null;
    let error: unknown = null;
    for (let n = 0; n < attempts; n++) {
      const deployment = this.#pick(route, tried) ?? (lastResort && n === 0 ? this.#soonestBack(route) : null);
      if (!deployment) break;
      (tried ??= []).push(deployment);
      const result = await this.#attempt(model, deployment, fallback, signal, attempt);
      if ('routed' in result) return { routed: result.routed };
      error = result.error;
      if (result.stop) return { error, final: true };
      if (result.contextLength) return { error, contextLength: true };
    }
    return { error };
  }

  async #attempt<T>(model: ModelConfig, deployment: Deployment, fallback: boolean, signal: AbortSignal, attempt: Attempt<T>) {
    // Without a max_concurrency there is nothing to wait for, and no turn is spent on it.
    const queued = this.#gate.enter(deployment, signal);
    if (queued) await queued;
    this.health.startAttempt(deployment);
    this.metrics?.inFlight(deployment.id, 1);
    const startedMs = performance.now();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.health.endAttempt(deployment);
      this.metrics?.inFlight(deployment.id, -1);
      this.#gate.leave(deployment);
    };
    try {
      const value = await attempt(model, deployment);
      const ms = performance.now() - startedMs;
      this.health.succeeded(deployment, ms);
      this.metrics?.attempt(model.id, deployment.id, 'success');
      this.metrics?.ttfb(deployment.id, ms / 1000);
      return { routed: { value, served: { model, deployment: deployment.id, fallback }, release } };
    } catch (err) {
      // Judged before the release: a failed probe must still count as the probe it was.
      const verdict = this.#judge(model, deployment, err, signal);
      release();
      return { error: err, ...verdict };
    }
  }

  /** Records what a failed attempt says about its deployment, and whether the call may go on. */
  #judge(model: ModelConfig, deployment: Deployment, err: unknown, signal: AbortSignal): { stop?: boolean; contextLength?: boolean } {
    const failure = classifyFailure(err, signal);
    switch (failure.kind) {
      case 'retry':
        this.metrics?.attempt(model.id, deployment.id, 'failure');
        this.health.failed(deployment, failure.unreachable);
        return {};
      case 'rate_limited':
        this.metrics?.attempt(model.id, deployment.id, 'rate_limited');
        if (failure.retryAfterMs === null) this.health.failed(deployment, null);
        else this.health.rateLimited(deployment, this.now() + failure.retryAfterMs);
        return {};
      case 'context_length':
        this.metrics?.attempt(model.id, deployment.id, 'context_length');
        this.health.succeeded(deployment, null);
        return { contextLength: true };
      default:
        // The engine answered (the caller's own 4xx), or the caller left: not the deployment's fault.
        this.metrics?.attempt(model.id, deployment.id, signal.aborted ? 'aborted' : 'client_error');
        return { stop: true };
    }
  }

  /** The strategy's choice among deployments that may take a call and were not tried yet in this call. */
  #pick(route: ModelRoute, tried: Deployment[] | null): Deployment | null {
    const nowMs = this.now();
    const candidates = route.scratch;
    let count = 0;
    let queued = 0;
    for (const d of route.deployments) {
      if ((tried !== null && tried.includes(d)) || !this.health.available(d, nowMs)) continue;
      // A deployment at its max_concurrency takes a call only when every other is full too.
      if (this.#gate.full(d)) {
        queued++;
        continue;
      }
      candidates[count++] = d;
    }
    if (count === 0 && queued > 0) {
      for (const d of route.deployments) if ((tried === null || !tried.includes(d)) && this.health.available(d, nowMs)) candidates[count++] = d;
    }
    return count === 0 ? null : route.picker.pick(candidates, count);
  }

  #soonestBack(route: ModelRoute): Deployment | null {
    let best: Deployment | null = null;
    for (const d of route.deployments) if (!best || this.health.of(d).coolUntilMs < this.health.of(best).coolUntilMs) best = d;
    return best;
  }

  #route(model: ModelConfig): ModelRoute {
    let route = this.#routes.get(model.id);
    if (!route) {
      const deployments = model.binding.deployments;
      route = { deployments, picker: pickerFor(this.#settings.strategy, this.health), scratch: new Array<Deployment>(deployments.length) };
      this.#routes.set(model.id, route);
    }
    return route;
  }
}

/** Every deployment cooling down and no fallback configured that could serve. */
function allCoolingDown(model: ModelConfig): AppError {
  return new AppError('upstream', `Upstream for model ${model.id} is unavailable: every deployment is cooling down after failures`, {
    code: 'upstream_error',
    retryable: true,
  });
}
