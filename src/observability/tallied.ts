/**
 * Counters and histograms for the per-request hot path. prom-client validates and hashes
 * the label object on every inc() and observe(), several times per proxied request
 * (bench/RESULTS-archive.md has the cost); these find each series through one Map level per label value, and give the
 * registry prom-client's own value shapes only when it is scraped.
 */
import type { Metric, Registry } from 'prom-client';

type Labels = Record<string, string>;

/** The shape prom-client's registry formats (what its own metrics' get() returns). */
interface Snapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>;
}

interface Definition<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** What the registry reads off a metric (prom-client's Registry calls only these). */
abstract class TalliedMetric<L extends string, S extends { labels: Labels }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum' as const;
  /** One Map level per label, so a call builds no key string (label values are mostly constants, their hashes cached). */
  #byLabels = new Map<string, unknown>();
  protected series: S[] = [];

  constructor(
    private readonly definition: Definition<L>,
    private readonly newSeries: (labels: Labels) => S,
  ) {
    if (definition.labelNames.length === 0) throw new TypeError(`${definition.name}: a tallied metric needs labels (use prom-client's own otherwise)`);
    this.name = definition.name;
    this.help = definition.help;
    for (const registry of definition.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in `labelNames` order), created on first use. */
  protected seriesOf(labelValues: readonly string[]): S {
    const { labelNames } = this.definition;
    if (labelValues.length !== labelNames.length) throw new TypeError(`${this.name}: expected ${labelNames.length} label values`);
    let level = this.#byLabels;
    for (let i = 0; i < labelValues.length - 1; i++) {
      let next = level.get(labelValues[i]!) as Map<string, unknown> | undefined;
      if (!next) level.set(labelValues[i]!, (next = new Map()));
      level = next;
    }
    const last = labelValues[labelValues.length - 1]!;
    let series = level.get(last) as S | undefined;
    if (!series) {
      const labels: Labels = {};
      labelNames.forEach((name, i) => (labels[name] = labelValues[i]!));
      series = this.newSeries(labels);
      level.set(last, series);
      this.series.push(series);
    }
    return series;
  }

  reset(): void {
    this.#byLabels.clear();
    this.series = [];
  }
}

export class TalliedCounter<L extends string> extends TalliedMetric<L, { labels: Labels; value: number }> {
  constructor(definition: Definition<L>) {
    super(definition, (labels) => ({ labels, value: 0 }));
  }

  /** Adds `value` (≥ 0) to the series of these label values, given in `labelNames` order. */
  inc(labelValues: readonly string[], value = 1): void {
    if (!(value >= 0) || !Number.isFinite(value)) throw new TypeError(`${this.name}: a counter only grows by finite amounts, got ${value}`);
    this.seriesOf(labelValues).value += value;
  }

  get(): Promise<Snapshot> {
    const values = this.series.map(({ labels, value }) => ({ labels, value }));
    return Promise.resolve({ name: this.name, help: this.help, type: 'counter', aggregator: this.aggregator, values });
  }
}

interface HistogramSeries {
  labels: Labels;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  counts: number[];
  sum: number;
}

export class TalliedHistogram<L extends string> extends TalliedMetric<L, HistogramSeries> {
  readonly #bounds: readonly number[];

  constructor(definition: Definition<L> & { buckets: readonly number[] }) {
    const bounds = [...definition.buckets].sort((a, b) => a - b);
    super(definition, (labels) => ({ labels, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0 }));
    this.#bounds = bounds;
  }

  observe(labelValues: readonly string[], value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: cannot observe ${value}`);
    const series = this.seriesOf(labelValues);
    let bucket = 0;
    while (bucket < this.#bounds.length && value > this.#bounds[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += value;
  }

  get(): Promise<Snapshot> {
    const values: Snapshot['values'] = [];
    for (const { labels, counts, sum } of this.series) {
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative });
      });
      cumulative += counts[this.#bounds.length]!;
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: cumulative });
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: cumulative });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: 'histogram', aggregator: this.aggregator, values });
  }
}
