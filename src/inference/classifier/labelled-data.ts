/**
 * Labelled data for `sluice packs train|calibrate|eval`: JSON Lines, one example a line,
 * `{"text": "...", "labels": ["Sports", "Healthy Living > Wellness", "harassment"]}`.
 * Labels are matched case-insensitively against the pack's label sets by name, tier path
 * or taxonomy id; a positive label makes its ancestors positive (a branch belongs to its
 * parent), and on a moderation pack any category makes the example unsafe. An example
 * with no labels is a negative for every label.
 */
import { open } from 'node:fs/promises';
import { AppError } from '../../domain/shared/errors.js';
import { findLabel, type LabelSetName } from '../../domain/shared/classification/label-sets.js';
import type { ClassifierPack } from './pack.js';

export interface Example {
  line: number;
  text: string;
  labels: string[];
}

/** Refuse files that would not fit comfortably in memory before reading them. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;
const MAX_TEXT_CHARS = 100_000;

const bad = (file: string, line: number, what: string) => new AppError('invalid_request', `${file} line ${line}: ${what}`, { line });

export async function readLabelled(file: string, name = file): Promise<Example[]> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_FILE_BYTES) throw new AppError('invalid_request', `${name} is ${size} bytes; the limit is ${MAX_FILE_BYTES}`);
    const examples: Example[] = [];
    let line = 0;
    for await (const text of handle.readLines({ encoding: 'utf8' })) {
      line++;
      if (text.trim() === '') continue;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw bad(name, line, 'not valid JSON');
      }
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad(name, line, 'must be a JSON object');
      const { text: t, labels } = raw as Record<string, unknown>;
      if (typeof t !== 'string' || t.trim() === '') throw bad(name, line, 'text must be a non-empty string');
      if (t.length > MAX_TEXT_CHARS) throw bad(name, line, `text is longer than ${MAX_TEXT_CHARS} characters`);
      if (!Array.isArray(labels) || !labels.every((l) => typeof l === 'string')) throw bad(name, line, 'labels must be an array of strings');
      examples.push({ line, text: t, labels });
    }
    if (examples.length === 0) throw new AppError('invalid_request', `${name} has no examples`);
    return examples;
  } finally {
    await handle.close();
  }
}

/** 0/1 truth per example for every label of every set of the pack. */
export function targets(pack: ClassifierPack, examples: readonly Example[], name: string): Map<LabelSetName, Uint8Array[]> {
  const out = new Map<LabelSetName, Uint8Array[]>();
  for (const set of pack.labelSets) out.set(set.name, examples.map(() => new Uint8Array(set.labels.length)));
  examples.forEach((example, n) => {
    for (const label of example.labels) {
      let found = false;
      for (const set of pack.labelSets) {
        let i = findLabel(set, label);
        if (i === -1) continue;
        found = true;
        for (; i !== -1; i = set.labels[i]!.parent) out.get(set.name)![n]![i] = 1;
        if (set.name === 'moderation' && out.has('unsafe')) out.get('unsafe')![n]![0] = 1;
      }
      if (!found) throw bad(name, example.line, `label ${JSON.stringify(label)} is not in this pack's label sets (${pack.manifest.label_sets.join(', ')})`);
    }
  });
  return out;
}
