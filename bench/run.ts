/**
 * `npm run bench [name…]`: runs every bench/*.bench.ts (or the named ones) one after
 * another and prints their figures. Each module's default export is an async function
 * returning rows of { name, value, unit, note? }; ratios are computed inside a bench
 * from measurements taken in the same run.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

for (const file of files) {
  console.log(`\n## ${file.replace('.bench.ts', '')}`);
  const started = Date.now();
  const mod = (await import(pathToFileURL(path.join(here, file)).href)) as { default: () => Promise<BenchRow[]> };
  const rows = await mod.default();
  for (const row of rows) {
    const value = Number.isInteger(row.value) ? String(row.value) : row.value.toFixed(3);
    console.log(`- ${row.name}: ${value} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  }
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
