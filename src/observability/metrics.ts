/** Prometheus metrics of one Sluice instance (own registry, so tests can run several apps). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from './tallied.js';

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

  /** Label values: model, direction (`input` or `output`). */
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

  constructor(options: { processMetrics?: boolean } = {}) {
    const inFlight = () => this.httpInFlight;
    new Gauge({
      name: 'sluice_http_requests_in_flight',
      help: 'HTTP requests being served',
      registers: [this.registry],
      collect() {
        this.set(inFlight());
      },
    });
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'sluice_' });
  }
}
