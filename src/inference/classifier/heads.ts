/**
 * Trained head files (`heads/<set>.json` in a pack) and the atomic file writes every
 * pack change goes through: write a temporary file, then rename over the old one, so a
 * crash leaves the previous pack intact.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ManifestError } from './manifest.js';
import type { LinearHead } from './scoring.js';
import { jsonErrorPlace, placeAndReason } from '../../domain/shared/json-position.js';

export const HEAD_FORMAT = 1;

interface HeadFile {
  format: number;
  set: string;
  /** Fingerprint of the backbone the head was trained on. */
  backbone: string;
  dim: number;
  labels: string[];
  weights: number[][];
  bias: number[];
}

export async function atomicWrite(file: string, contents: string | Uint8Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, contents);
  await rename(tmp, file);
}

export function headToJson(set: string, backbone: string, head: LinearHead): string {
  const { rows, dim, data } = head.weights;
  const weights = Array.from({ length: rows }, (_, r) => Array.from(data.subarray(r * dim, (r + 1) * dim)));
  const file: HeadFile = { format: HEAD_FORMAT, set, backbone, dim, labels: head.labels, weights, bias: Array.from(head.bias) };
  return JSON.stringify(file);
}

export async function readHead(file: string, packId: string, backbone: { fingerprint: string; dim: number }): Promise<LinearHead> {
  const name = `${packId}/${path.basename(path.dirname(file))}/${path.basename(file)}`;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ManifestError(`${name}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  let parsed: HeadFile;
  try {
    parsed = JSON.parse(text) as HeadFile;
  } catch {
    // The place in Sluice's words, not the parser's: this message reaches clients in a 503.
    const place = jsonErrorPlace(text);
    throw new ManifestError(`${name}: not valid JSON${place ? ` (${placeAndReason(place)})` : ''}`);
  }
  const bad = (key: string, what: string) => new ManifestError(`${name}: key ${key}: ${what}`);
  if (parsed.format !== HEAD_FORMAT) throw bad('format', `must be ${HEAD_FORMAT}`);
  if (parsed.dim !== backbone.dim) throw bad('dim', `is ${parsed.dim}, the backbone's embeddings have ${backbone.dim}`);
  if (parsed.backbone !== backbone.fingerprint) throw bad('backbone', 'the head was trained on another backbone; run `sluice packs train` again');
  if (!Array.isArray(parsed.labels) || !Array.isArray(parsed.weights) || parsed.weights.length !== parsed.labels.length) {
    throw bad('weights', 'must have one row per label');
  }
  if (!Array.isArray(parsed.bias) || parsed.bias.length !== parsed.labels.length) throw bad('bias', 'must have one value per label');
  const data = new Float32Array(parsed.labels.length * parsed.dim);
  parsed.weights.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== parsed.dim) throw bad(`weights.${r}`, `must have ${parsed.dim} numbers`);
    data.set(row, r * parsed.dim);
  });
  return { labels: parsed.labels, weights: { rows: parsed.labels.length, dim: parsed.dim, data }, bias: Float32Array.from(parsed.bias) };
}
