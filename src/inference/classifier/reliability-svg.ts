/**
 * A reliability diagram as a standalone SVG: per confidence bin, the observed frequency
 * of positives before and after calibration against the diagonal of perfect
 * calibration, with each curve's ECE in the legend. Plain SVG text: no plotting library
 * is needed for two polylines and an axis.
 */
import type { CalibrationMetrics } from '../../domain/shared/classification/calibration.js';

const SIZE = 360;
const PAD = 48;
const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function curve(m: CalibrationMetrics, colour: string): string {
  const scale = SIZE - 2 * PAD;
  const points = m.bins
    .filter((b) => b.count > 0)
    .map((b) => `${(PAD + b.confidence * scale).toFixed(1)},${(SIZE - PAD - b.frequency * scale).toFixed(1)}`);
  const dots = points.map((p) => `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${colour}"/>`).join('');
  return `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.join(' ')}"/>${dots}`;
}

export function reliabilitySvg(title: string, before: CalibrationMetrics, after: CalibrationMetrics): string {
  const axis = SIZE - PAD;
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map((t) => {
      const x = PAD + t * (SIZE - 2 * PAD);
      const y = SIZE - PAD - t * (SIZE - 2 * PAD);
      return `<text x="${x}" y="${axis + 16}" font-size="10" text-anchor="middle">${t}</text><text x="${PAD - 8}" y="${y + 3}" font-size="10" text-anchor="end">${t}</text>`;
    })
    .join('');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}" font-family="sans-serif">`,
    `<title>${escape(title)}</title>`,
    `<rect width="${SIZE}" height="${SIZE}" fill="white"/>`,
    `<text x="${SIZE / 2}" y="20" font-size="13" text-anchor="middle">${escape(title)}</text>`,
    `<line x1="${PAD}" y1="${axis}" x2="${axis}" y2="${axis}" stroke="black"/><line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${axis}" stroke="black"/>`,
    `<line x1="${PAD}" y1="${axis}" x2="${axis}" y2="${PAD}" stroke="#999" stroke-dasharray="4 3"/>`,
    ticks,
    `<text x="${SIZE / 2}" y="${SIZE - 10}" font-size="11" text-anchor="middle">mean predicted probability</text>`,
    `<text x="14" y="${SIZE / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 14 ${SIZE / 2})">observed frequency</text>`,
    curve(before, '#d62728'),
    curve(after, '#1f77b4'),
    `<text x="${PAD + 8}" y="${PAD + 4}" font-size="11" fill="#d62728">before: ECE ${before.ece.toFixed(4)}</text>`,
    `<text x="${PAD + 8}" y="${PAD + 20}" font-size="11" fill="#1f77b4">after: ECE ${after.ece.toFixed(4)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
