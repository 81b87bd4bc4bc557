/** Prometheus metrics of one Sluice instance (own registry, so tests can run several apps). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from './tallied.js';
import type { RoutingMetrics } from '../domain/models/routing-metrics.port.js';

export class Metrics {
  readonly registry = new Registry();

  // The metrics every request touches are tallied (tallied.ts); the rest are prom-client's.

  /** Label values: route, method, status. */
  readonly httpRequests = new TalliedCounter({
    name: 'sluice_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  /** Label values: route, method. */
  readonly httpDuration = new TalliedHistogram({
    name: 'sluice_http_request_duration_seconds',
    help: 'HTTP request latency by route template',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Requests being served; read into the gauge when scraped. */
  httpInFlight = 0;

  /** WebSockets open (the Responses API's WebSocket mode); read into the gauge when scraped. */
  websocketsOpen = 0;

  /** Label values: model, direction (`input`, `output`, or `cached_input`: of the input, read from a prompt cache). */
  readonly usageTokens = new TalliedCounter({
    name: 'sluice_usage_tokens_total',
    help: 'Metered tokens by model and direction',
    labelNames: ['model', 'direction'] as const,
    registers: [this.registry],
  });

  /** Label values: model. */
  readonly usageCostMicros = new TalliedCounter({
    name: 'sluice_usage_cost_micro_usd_total',
    help: 'Metered cost in micro-dollars by model',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  /** One observation per embedding runtime call: _count is batches run, _sum is inputs, _sum/_count the mean batch size. */
  readonly embeddingBatchSize = new Histogram({
    name: 'sluice_embedding_batch_size',
    help: 'Inputs per in-process embedding runtime call (dynamic batching), by model',
    labelNames: ['model'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });

  readonly audioSeconds = new Counter({
    name: 'sluice_audio_seconds_total',
    help: 'Seconds of audio transcribed or translated',
    labelNames: ['model', 'route'] as const,
    registers: [this.registry],
  });

  /** Label values: target_kind, outcome (`delivered`, `retry`: failed and rescheduled, `dead`: failed for the last time). */
  readonly outboxDeliveries = new Counter({
    name: 'sluice_outbox_deliveries_total',
    help: 'Settlement outbox delivery attempts by target kind and outcome',
    labelNames: ['target_kind', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Label values: model, deployment, outcome (success, failure, rate_limited, client_error, context_length, aborted). */
  readonly upstreamRequests = new TalliedCounter({
    name: 'sluice_upstream_requests_total',
    help: 'Attempts on upstream engines by model, deployment and outcome (a retried call counts each attempt)',
    labelNames: ['model', 'deployment', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Label values: outcome (hit, new, moved_cooled, moved_full, moved_overloaded, moved_unknown, moved_failed). */
  readonly routingAffinity = new TalliedCounter({
    name: 'sluice_routing_affinity_total',
    help: 'Session affinity: turns sent to their pinned deployment (hit), new sessions placed (new), sessions moved and why',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Label values: deployment. Until the first byte of the answer (a stream's first event). */
  readonly upstreamTtfb = new TalliedHistogram({
    name: 'sluice_upstream_time_to_first_byte_seconds',
    help: "Time to an upstream engine's answer (a stream's first event) by deployment",
    labelNames: ['deployment'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly upstreamCooldowns = new Counter({
    name: 'sluice_upstream_cooldowns_total',
    help: 'Deployments taken out of rotation, by deployment and reason (failures, retry_after)',
    labelNames: ['deployment', 'reason'] as const,
    registers: [this.registry],
  });

  /** Calls in flight per deployment on this replica; read into the gauge when scraped. */
  readonly upstreamInFlight = new Map<string, number>();

  constructor(options: { processMetrics?: boolean } = {}) {
    const upstreamInFlight = this.upstreamInFlight;
    new Gauge({
      name: 'sluice_upstream_in_flight',
      help: 'Calls in flight on each upstream deployment (this replica)',
      labelNames: ['deployment'] as const,
      registers: [this.registry],
      collect() {
        for (const [deployment, count] of upstreamInFlight) this.set({ deployment }, count);
      },
    });
    const inFlight = () => this.httpInFlight;
    new Gauge({
      name: 'sluice_http_requests_in_flight',
      help: 'HTTP requests being served',
      registers: [this.registry],
      collect() {
        this.set(inFlight());
      },
    });
    const socketsOpen = () => this.websocketsOpen;
    new Gauge({
      name: 'sluice_websockets_open',
      help: 'WebSockets open on this replica',
      registers: [this.registry],
      collect() {
        this.set(socketsOpen());
      },
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'sluice_' });
  }
}

/** The router's reports (src/inference/routing/router.ts) as these metrics. */
export function routingMetricsOf(metrics: Metrics): RoutingMetrics {
  return {
    attempt: (model, deployment, outcome) => metrics.upstreamRequests.inc([model, deployment, outcome]),
    ttfb: (deployment, seconds) => metrics.upstreamTtfb.observe([deployment], seconds),
    cooled: (deployment, reason) => metrics.upstreamCooldowns.inc({ deployment, reason }),
    inFlight: (deployment, delta) => metrics.upstreamInFlight.set(deployment, (metrics.upstreamInFlight.get(deployment) ?? 0) + delta),
    affinity: (outcome) => metrics.routingAffinity.inc([outcome]),
  };
}
