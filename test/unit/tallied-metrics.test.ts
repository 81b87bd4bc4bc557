import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from '../../src/observability/tallied.js';

/** The same observations through prom-client's own metrics and the tallied ones must scrape to the same text. */
describe('tallied metrics', () => {
  const buckets = [0.001, 0.01, 0.1, 1];

  it('a counter scrapes exactly as prom-client’s Counter', async () => {
    const [ours, theirs] = [new Registry(), new Registry()];
    const definition = { name: 'x_requests_total', help: 'Requests "by" route\\status', labelNames: ['route', 'status'] as const };
    const tallied = new TalliedCounter({ ...definition, registers: [ours] });
    const reference = new Counter({ ...definition, registers: [theirs] });
    const calls: Array<[string, string, number]> = [
      ['/v1/chat/completions', '200', 1],
      ['/v1/chat/completions', '200', 2.5],
      ['/v1/a"b\\c\nd', '404', 1],
      ['/v1/embeddings', '200', 0],
    ];
    for (const [route, status, value] of calls) {
      tallied.inc([route, status], value);
      reference.inc({ route, status }, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('x_requests_total{route="/v1/chat/completions",status="200"} 3.5\n');
  });

  it('a histogram scrapes exactly as prom-client’s Histogram, bounds inclusive', async () => {
    const [ours, theirs] = [new Registry(), new Registry()];
    const definition = { name: 'x_seconds', help: 'Latency', labelNames: ['route'] as const, buckets };
    const tallied = new TalliedHistogram({ ...definition, registers: [ours] });
    const reference = new Histogram({ ...definition, registers: [theirs] });
    for (const [route, seconds] of [['/a', 0.0005], ['/a', 0.001], ['/a', 0.05], ['/a', 7], ['/b', 0.1]] as const) {
      tallied.observe([route], seconds);
      reference.observe({ route }, seconds);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('x_seconds_bucket{le="0.001",route="/a"} 2\n');
    expect(text).toContain('x_seconds_bucket{le="+Inf",route="/a"} 4\n');
    expect(text).toContain('x_seconds_count{route="/b"} 1\n');
  });

  it('refuses what prom-client refuses, and reset() empties the series', async () => {
    const registry = new Registry();
    const counter = new TalliedCounter({ name: 'x_total', help: 'h', labelNames: ['a'] as const, registers: [registry] });
    const histogram = new TalliedHistogram({ name: 'x_h', help: 'h', labelNames: ['a'] as const, buckets, registers: [registry] });
    expect(() => counter.inc(['v'], -1)).toThrow(TypeError);
    expect(() => counter.inc(['v'], Number.NaN)).toThrow(TypeError);
    expect(() => histogram.observe(['v'], Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => counter.inc(['v', 'w'])).toThrow('x_total: expected 1 label values');
    expect(() => counter.inc([])).toThrow(TypeError);
    counter.inc(['v']);
    histogram.observe(['v'], 0.5);
    registry.resetMetrics();
    expect(await registry.metrics()).toBe('# HELP x_total h\n# TYPE x_total counter\n\n# HELP x_h h\n# TYPE x_h histogram\n');
  });
});
