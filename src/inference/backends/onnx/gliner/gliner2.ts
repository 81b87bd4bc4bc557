/**
 * gliner2-base-v1's three use cases on a GLiNER span model (digest §1.3):
 * - ner: `labels` → {entities: {label: [text…]}}, every label a key;
 * - json: `schema` {group: ["name::type::description"]} → {data: {group: [{name: value|null}]}},
 *   `str` fields take the best-scoring span, `list` fields every span;
 * - classification: `schema` {task: [label…]} → {classification: {task: label}}, the
 *   label whose best span scores highest.
 */
import { invalidRequest } from '../../../../domain/shared/errors.js';
import type { GlinerEngine } from './engine.js';
import { byLabel } from './pii.js';
import { assertLabelCount, readChoice, readSchema, readStringList, readThreshold } from './options.js';

interface Field {
  name: string;
  type: 'str' | 'list';
}

export function parseField(entry: string): Field {
  const [name, type] = entry.split('::').map((p) => p.trim());
  if (!name) throw invalidRequest(`metadata.schema: "${entry}" has no field name`, 'metadata.schema');
  if (type && type !== 'str' && type !== 'list') throw invalidRequest(`metadata.schema: type of "${name}" must be str or list`, 'metadata.schema');
  return { name, type: type === 'list' ? 'list' : 'str' };
}

async function ner(engine: GlinerEngine, text: string, options: Record<string, unknown>, requested: readonly string[] | null) {
  const labels = readStringList(options, 'labels') ?? (requested ? [...requested] : null);
  if (!labels) throw invalidRequest('metadata.labels is required for the ner use case', 'metadata.labels');
  assertLabelCount(labels, 'metadata.labels');
  const found = byLabel(await engine.extract(text, labels, readThreshold(options)));
  return { entities: Object.fromEntries(labels.map((l) => [l, (Object.hasOwn(found, l) ? found[l]! : [])])) };
}

async function json(engine: GlinerEngine, text: string, options: Record<string, unknown>) {
  const threshold = readThreshold(options);
  // Group and field names are the client's strings: null-prototype objects keep them as keys.
  const data = Object.create(null) as Record<string, Record<string, string | string[] | null>[]>;
  for (const [group, entries] of Object.entries(readSchema(options))) {
    const fields = entries.map(parseField);
    const labels = [...new Set(fields.map((f) => f.name))];
    assertLabelCount(labels, 'metadata.schema');
    const found = (await engine.extract(text, labels, threshold)).sort((a, b) => b.score - a.score);
    const record = Object.create(null) as Record<string, string | string[] | null>;
    for (const f of fields) {
      const hits = found.filter((e) => e.label === f.name).map((e) => e.text);
      record[f.name] = f.type === 'list' ? [...new Set(hits)] : (hits[0] ?? null);
    }
    data[group] = [record];
  }
  return { data };
}

async function classification(engine: GlinerEngine, text: string, options: Record<string, unknown>) {
  const result = Object.create(null) as Record<string, string | null>;
  for (const [task, labels] of Object.entries(readSchema(options))) {
    assertLabelCount(labels, 'metadata.schema');
    const spans = await engine.extract(text, labels, 0);
    const best = spans.reduce<{ label: string; score: number } | null>((b, s) => (!b || s.score > b.score ? s : b), null);
    result[task] = best?.label ?? null;
  }
  return { classification: result };
}

export async function runGliner2(engine: GlinerEngine, text: string, options: Record<string, unknown>, requested: readonly string[] | null): Promise<Record<string, unknown>> {
  const usecase = readChoice(options, 'usecase', ['ner', 'json', 'classification'] as const, 'ner');
  if (usecase === 'json') return json(engine, text, options);
  if (usecase === 'classification') return classification(engine, text, options);
  return ner(engine, text, options, requested);
}
