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
import { AppError, isAppError } from '../../domain/shared/errors.js';
import type { CallContext, DeploymentStatus } from '../../domain/models/inference-backend.port.js';
import { classifyFailure } from './attempt-outcome.js';
import { ConcurrencyGate, isServerBusy } from './concurrency.js';
import { HealthBook } from './deployment-health.js';
import type { RoutingMetrics } from '../../domain/models/routing-metrics.port.js';
import { SharedRoutingState } from './shared-state.js';
import { pickerFor, type Picker } from './strategies.js';
import { SessionAffinity, type AffineCall } from './affinity.js';
import { Answer, type Routed, type ServedBy } from './routed-answer.js';

export type { Routed, ServedBy };


/** What the router reports to Prometheus (src/observability/metrics.ts). */
export type { RoutingMetrics };

export type Attempt<T> = (model: ModelConfig, deployment: Deployment) => Promise<T>;

interface ModelRoute {
  deployments: readonly Deployment[];
  picker: Picker;
  /** Scratch space for the candidates of one pick (the hot path allocates nothing). */
  scratch: Deployment[];
  /** What each deployment reports when it serves, as the model asked for and as a fallback: made once, shared by every call. */
  served: Map<Deployment, ServedBy>;
  servedAsFallback: Map<Deployment, ServedBy>;
  /** Session affinity, when the model (or routing.affinity) sets it and it has deployments to choose among. */
  affinity: SessionAffinity | null;
  /** Whether the other replicas' state was read before this model's first call (always, without Redis). */
  synced: boolean;
}

/** What a failed attempt leaves the call to do next. */
type Next = 'retry' | 'stop' | 'context_length';


export class Router {
  readonly health: HealthBook;
  readonly #routes = new Map<string, ModelRoute>();
  readonly #gate: ConcurrencyGate;
  readonly #shared: SharedRoutingState | null;
  readonly #settings: RoutingConfig;
  /** Ends an attempt's hold on its deployment; bound once, handed to every held answer. */
  readonly #leave = (deployment: Deployment): void => {
    this.health.endAttempt(deployment);
    this.metrics?.inFlight(deployment.id, -1);
    this.#gate.leave(deployment);
  };

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
    this.#shared?.onPin((modelId, key, deployment) => {
      const model = Object.hasOwn(this.config.models, modelId) ? this.config.models[modelId] : undefined;
      if (model && model.binding.deployments.length > 0) this.#route(model).affinity?.adopt(key, deployment, this.now());
    });
  }

  /**
   * Runs `attempt` on the model's deployments (then its fallbacks) until one answers, and
   * tells `call.onServed` which did; the deployment's hold ends as the answer resolves.
   */
  run<T>(model: ModelConfig, call: CallContext, attempt: Attempt<T>): Promise<T> {
    // #call answers the bare value when it holds nothing (no wrapper to allocate and unwrap per call).
    return this.#call(model, call, attempt, false) as Promise<T>;
  }

  /** As run(), but the deployment stays held until release() (a stream, until it ends). */
  open<T>(model: ModelConfig, call: CallContext, attempt: Attempt<T>): Promise<Routed<T>> {
    return this.#call(model, call, attempt, true) as Promise<Routed<T>>;
  }

  /**
   * The call: each model in turn (the one asked for, then its fallbacks), each of its
   * deployments at most once. One async function on purpose: every call of every
   * upstream request passes here, and each further async layer costs a promise and a
   * microtask turn on the answer's way back.
   */
  async #call<T>(model: ModelConfig, call: AffineCall, attempt: Attempt<T>, hold: boolean): Promise<T | Routed<T>> {
    const signal = call.signal;
    let chain: readonly string[] = model.fallbacks;
    let next = 0;
    let current: ModelConfig = model;
    let lastError: unknown = null;
    let contextFallbacks = model.contextWindowFallbacks.length > 0;
    for (;;) {
      // With nowhere else to go, a cooldown must not turn the call away (see #first).
      const lastResort = this.#nextModel(chain, next) === undefined && !(current === model && contextFallbacks);
      const route = this.#route(current);
      // A model's first call waits for the other replicas' cooldowns (once; bounded by the first connection's wait).
      if (!route.synced) await this.#firstSync(route);
      const attempts = Math.min(this.#settings.retries + 1, route.deployments.length);
      let tried: Deployment[] | null = null;
      let after: Next = 'retry';
      for (let n = 0; n < attempts && after === 'retry'; n++) {
        const deployment = n === 0 ? this.#first(route, call, lastResort) : this.#pick(route, tried);
        if (!deployment) break;
        // Only a call that may try again needs to remember where it went.
        if (attempts > 1) (tried ??= []).push(deployment);
        const queued = this.#gate.enter(deployment, signal);
        if (queued) {
          try {
            await queued;
          } catch (err) {
            // Saturated past queue_timeout_ms: with a fallback to go to, the call spills over to it instead of being refused.
            if (lastResort || !isServerBusy(err)) throw err;
            lastError = err;
            break;
          }
        }
        this.health.startAttempt(deployment);
        this.metrics?.inFlight(deployment.id, 1);
        const startedMs = performance.now();
        let value: T;
        try {
          value = await attempt(current, deployment);
        } catch (err) {
          lastError = err;
          call.story?.attempt(deployment.id, deployment.provider ?? null, statusOfFailure(err), codeOfFailure(err), startedMs);
          // Judged before the release: a failed probe must still count as the probe it was.
          after = this.#judge(current, deployment, err, signal);
          this.#leave(deployment);
          continue;
        }
        this.#succeeded(current, deployment, performance.now() - startedMs);
        // A session whose turn its pinned deployment failed moves to the one that served it.
        if (n > 0 && route.affinity !== null) this.#movedBy(route.affinity, call, deployment);
        const served = (current === model ? route.served : route.servedAsFallback).get(deployment)!;
        if (call.story) {
          call.story.attempt(deployment.id, deployment.provider ?? null, 200, null, startedMs);
          call.story.served(served.model, deployment.id, deployment.provider ?? null, served.fallback);
        }
        if (hold) {
          call.onServed?.(served);
          return new Answer(value, served, deployment, this.#leave);
        }
        this.#leave(deployment);
        call.onServed?.(served);
        return value;
      }
      if (after === 'context_length' && contextFallbacks) {
        contextFallbacks = false;
        chain = model.contextWindowFallbacks;
        next = 0;
      } else if (after !== 'retry') {
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
   * The first deployment a model's call goes to. `lastResort`: no fallback follows, so
   * when every deployment is cooling down the call still goes to the one that is back
   * soonest (a cooldown never turns a model with nowhere else to go into a refusal).
   */
  #first(route: ModelRoute, call: AffineCall, lastResort: boolean): Deployment | null {
    const nowMs = this.now();
    const count = this.#candidates(route, null, nowMs);
    if (count === 0) return lastResort ? this.#soonestBack(route) : null;
    const key = route.affinity?.keyOf(call) ?? null;
    if (key !== null) return route.affinity!.choose(key, route.scratch, count, nowMs);
    return route.picker.pick(route.scratch, count);
  }

  #movedBy(affinity: SessionAffinity, call: AffineCall, deployment: Deployment): void {
    const key = affinity.keyOf(call);
    if (key !== null) affinity.servedElsewhere(key, deployment, this.now());
  }

  async #firstSync(route: ModelRoute): Promise<void> {
    await this.#shared?.syncNow();
    route.synced = true;
  }

  #succeeded(model: ModelConfig, deployment: Deployment, ms: number): void {
    this.health.succeeded(deployment, ms);
    this.metrics?.attempt(model.id, deployment.id, 'success');
    this.metrics?.ttfb(deployment.id, ms / 1000);
  }

  /** Records what a failed attempt says about its deployment, and whether the call may go on. */
  #judge(model: ModelConfig, deployment: Deployment, err: unknown, signal: AbortSignal): Next {
    const failure = classifyFailure(err, signal);
    switch (failure.kind) {
      case 'retry':
        this.metrics?.attempt(model.id, deployment.id, 'failure');
        this.health.failed(deployment, failure.unreachable);
        return 'retry';
      case 'rate_limited':
        this.metrics?.attempt(model.id, deployment.id, 'rate_limited');
        if (failure.retryAfterMs === null) this.health.failed(deployment, null);
        else this.health.rateLimited(deployment, this.now() + failure.retryAfterMs);
        return 'retry';
      case 'context_length':
        this.metrics?.attempt(model.id, deployment.id, 'context_length');
        this.health.succeeded(deployment, null);
        return 'context_length';
      default:
        // The engine answered (the caller's own 4xx), or the caller left: not the deployment's fault.
        this.metrics?.attempt(model.id, deployment.id, signal.aborted ? 'aborted' : 'client_error');
        return 'stop';
    }
  }

  /** The strategy's choice among deployments that may take a call and were not tried yet in this call. */
  #pick(route: ModelRoute, tried: Deployment[] | null): Deployment | null {
    const count = this.#candidates(route, tried, this.now());
    return count === 0 ? null : route.picker.pick(route.scratch, count);
  }

  /** Fills the route's scratch with the deployments that may take a call now and were not tried yet; returns how many. */
  #candidates(route: ModelRoute, tried: Deployment[] | null, nowMs: number): number {
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
    return count;
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
      const picker = pickerFor(this.#settings.strategy, this.health);
      const affinity = model.affinity === undefined ? this.#settings.affinity : model.affinity;
      route = {
        deployments,
        picker,
        scratch: new Array<Deployment>(deployments.length),
        served: new Map(deployments.map((d) => [d, Object.freeze({ model: model.id, deployment: d.id, fallback: false })])),
        servedAsFallback: new Map(deployments.map((d) => [d, Object.freeze({ model: model.id, deployment: d.id, fallback: true })])),
        affinity: affinity && deployments.length > 1 ? new SessionAffinity(model.id, deployments, affinity, this.health, picker, this.#shared, this.metrics) : null,
        synced: this.#shared === null,
      };
      this.#routes.set(model.id, route);
    }
    return route;
  }
}

/** The status a failed attempt's engine answered with; null when it never answered (a connection error, a timeout). */
const statusOfFailure = (err: unknown): number | null => (isAppError(err) ? (err.upstreamStatus ?? null) : null);

const codeOfFailure = (err: unknown): string | null => (isAppError(err) ? (err.code ?? err.kind) : 'connection_error');

/** Every deployment cooling down and no fallback configured that could serve. */
function allCoolingDown(model: ModelConfig): AppError {
  return new AppError('upstream', `Upstream for model ${model.id} is unavailable: every deployment is cooling down after failures`, {
    code: 'upstream_error',
    retryable: true,
  });
}
