/** A time-series line chart on uPlot (small and fast on canvas); the page gives a table of the same figures. */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Series } from '../lib/usage.js';

const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0969da', '#57606a'];

export function TimeChart({ series, label, unit }: { series: Series; label: string; unit: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const names = [...series.groups.keys()];
    const options: uPlot.Options = {
      width: Math.max(280, element.clientWidth),
      height: 280,
      series: [{}, ...names.map((name, i) => ({ label: name, stroke: COLORS[i % COLORS.length]!, width: 2, points: { show: false } }))],
      axes: [{}, { label: unit, size: 70 }],
      scales: { x: { time: true } },
      // The page speaks UTC (buckets, date range, CSV): so does the axis.
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      legend: { show: true },
    };
    const data: uPlot.AlignedData = [series.xs, ...names.map((name) => series.groups.get(name)!)];
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 280 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [series, unit]);
  return <figure className="chart" aria-label={label} ref={host} />;
}
