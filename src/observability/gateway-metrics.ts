/** The gateway's counters, on the instance's registry (GET /metrics). */
import { Counter } from 'prom-client';
import { TalliedCounter } from './tallied.js';
import type { Metrics } from './metrics.js';

export class GatewayMetrics {
  /** Label: reason (gateway_unconfigured, stale_timestamp, …). */
  readonly signatureRejections: Counter<'reason'>;
  /** Label: outcome (allowed, cached, denied, unavailable, misconfigured). Counted on every call, so tallied. */
  readonly allowanceChecks: TalliedCounter<'outcome'>;
  /** Label: outcome (delivered, retry, dead). */
  readonly settlementDeliveries: Counter<'outcome'>;

  constructor(metrics: Metrics) {
    const registers = [metrics.registry];
    this.signatureRejections = new Counter({
      name: 'sluice_gateway_signature_rejections_total',
      help: 'Gateway requests refused with invalid_gateway_signature, by internal reason',
      labelNames: ['reason'],
      registers,
    });
    this.allowanceChecks = new TalliedCounter({
      name: 'sluice_gateway_allowance_checks_total',
      help: 'Allowance checks with the intermediary by outcome; unavailable = failed open during an outage',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.settlementDeliveries = new Counter({
      name: 'sluice_gateway_settlement_deliveries_total',
      help: 'Usage report delivery attempts by outcome; dead = a dead letter (see GET /admin/v1/gateway/settlements?state=dead)',
      labelNames: ['outcome'],
      registers,
    });
  }
}
