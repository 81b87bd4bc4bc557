/**
 * Model files in the Hugging Face Hub layout: config.json, tokenizer.json, and the
 * graphs under onnx/ (full precision preferred, the quantized export otherwise).
 * Finds them, reports what is missing, and reads the JSON side files.
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Graph file names are tried in this order for each logical graph. */
const VARIANTS = ['', '_quantized', '_int8', '_uint8', '_fp16', '_q4'];

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** The file of a logical graph (`model`, `encoder_model`, `decoder_model_merged`), or null. */
export async function findGraph(dir: string, name: string): Promise<string | null> {
  for (const folder of ['onnx', '.']) {
    for (const variant of VARIANTS) {
      const file = path.join(dir, folder, `${name}${variant}.onnx`);
      if (await exists(file)) return file;
    }
  }
  return null;
}

/** The first of `names` that exists. */
export async function findAnyGraph(dir: string, names: readonly string[]): Promise<string | null> {
  for (const name of names) {
    const file = await findGraph(dir, name);
    if (file) return file;
  }
  return null;
}

export async function readJson<T = Record<string, unknown>>(dir: string, file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(path.join(dir, file), 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export async function requireJson<T = Record<string, unknown>>(dir: string, file: string): Promise<T> {
  const value = await readJson<T>(dir, file);
  if (value === null) throw new Error(`${file} is missing in ${dir}`);
  return value;
}

/** What a model directory lacks, as human-readable names; empty when complete. */
export async function missingFiles(dir: string, files: readonly string[], graphs: readonly (readonly string[])[]): Promise<string[]> {
  const missing: string[] = [];
  for (const file of files) if (!(await exists(path.join(dir, file)))) missing.push(file);
  for (const alternatives of graphs) {
    if (!(await findAnyGraph(dir, alternatives))) missing.push(`onnx/${alternatives[0]}.onnx`);
  }
  return missing;
}
