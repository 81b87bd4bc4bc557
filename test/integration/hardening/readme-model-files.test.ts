/**
 * The in-process model table of docs/models.md against the code's readiness rules: each ONNX
 * row names exactly the files `requiredFiles` checks (graph alternatives included), and
 * every model the ONNX runtime implements has a row.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_KINDS, requiredFiles } from '../../../src/inference/backends/onnx/engines.js';
import { CATALOG } from '../../../src/config/catalog.js';

const MODELS_PAGE = readFileSync(path.resolve(import.meta.dirname, '../../../docs/models.md'), 'utf8');

interface Row {
  models: string[];
  runtime: string;
  files: Set<string>;
}

function modelTable(): Row[] {
  // The first table of the section: its header row through the last row before a non-table line.
  const section = MODELS_PAGE.slice(MODELS_PAGE.indexOf('## In-process models'), MODELS_PAGE.indexOf('## Classifier packs'));
  const lines = section.split('\n');
  const header = lines.findIndex((line) => line.startsWith('| model | runtime | files |'));
  const end = lines.findIndex((line, i) => i > header && !line.startsWith('|'));
  return lines
    .slice(header + 2, end)
    .map((line) => {
      const [models, runtime, files] = line.split(' | ').map((cell) => cell.replace(/^\| /, ''));
      const ticks = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      return { models: ticks(models!), runtime: runtime!.trim(), files: new Set(ticks(files!).filter((f) => /\.(json|onnx|gguf)$/.test(f))) };
    });
}

describe('docs/models.md model-file table', () => {
  const rows = modelTable();

  it('has a row for every model the ONNX runtime implements, and only those run on onnx', () => {
    const onnxModels = rows.filter((r) => r.runtime === 'onnx').flatMap((r) => r.models);
    expect(onnxModels.sort()).toEqual(Object.keys(ENGINE_KINDS).sort());
  });

  for (const [model, kind] of Object.entries(ENGINE_KINDS)) {
    it(`${model}: the files column is what readiness requires`, () => {
      const row = rows.find((r) => r.models.includes(model))!;
      const required = requiredFiles(kind);
      const expected = new Set([...required.files, ...required.graphs.flat().map((g) => `onnx/${g}.onnx`)]);
      expect([...row.files].sort()).toEqual([...expected].sort());
    });
  }

  it('the gguf rows are every catalog GGUF model, each needing one .gguf file', () => {
    const ggufRows = rows.filter((r) => r.runtime === 'gguf');
    const ggufCatalog = CATALOG.filter((e) => e.defaultBackend === 'gguf').map((e) => e.id);
    expect(ggufRows.flatMap((r) => r.models).sort()).toEqual(ggufCatalog.sort());
    for (const row of ggufRows) expect([...row.files]).toEqual(['*.gguf']);
  });
});
