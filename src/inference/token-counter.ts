/**
 * Token counting with a model's own tokenizer (`tokenizer.json` in its model directory,
 * loaded once with @huggingface/tokenizers), and the documented fallback when a model has
 * none (typically an upstream whose weights are elsewhere).
 *
 * Fallback: ⌈UTF-8 bytes / 4⌉. For English and most prose this is at or below the real
 * count, so the context pre-check that uses it only rejects inputs that are clearly too
 * long; the upstream enforces its exact limit (and its 400 is passed through). It is also
 * what gets billed when an upstream reports no usage and no tokenizer is installed.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import type { TokenCount } from '../domain/models/model-resolver.port.js';

export const estimateTokens = (text: string): number => Math.ceil(Buffer.byteLength(text, 'utf8') / 4);

/** How long a missing tokenizer is remembered before the directory is looked at again. */
const MISSING_RECHECK_MS = 30_000;

interface Loaded {
  tokenizer: Tokenizer | null;
  checkedAtMs: number;
}

async function readJson(file: string): Promise<object | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as object;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export class TokenCounter {
  readonly #loaded = new Map<string, Promise<Loaded>>();

  /** The model's tokenizer, or null when its directory has no tokenizer.json. */
  async tokenizerFor(model: ModelSpec): Promise<Tokenizer | null> {
    const dir = model.binding.path;
    if (!dir) return null;
    let entry = this.#loaded.get(dir);
    if (entry) {
      const loaded = await entry;
      if (loaded.tokenizer || Date.now() - loaded.checkedAtMs < MISSING_RECHECK_MS) return loaded.tokenizer;
    }
    entry = this.#load(dir);
    this.#loaded.set(dir, entry);
    return (await entry).tokenizer;
  }

  async count(model: ModelSpec, text: string): Promise<TokenCount> {
    const tokenizer = await this.tokenizerFor(model);
    if (!tokenizer) return { tokens: estimateTokens(text), exact: false };
    return { tokens: tokenizer.encode(text, { add_special_tokens: false }).ids.length, exact: true };
  }

  async #load(dir: string): Promise<Loaded> {
    const checkedAtMs = Date.now();
    try {
      const json = await readJson(path.join(dir, 'tokenizer.json'));
      if (!json) return { tokenizer: null, checkedAtMs };
      const config = (await readJson(path.join(dir, 'tokenizer_config.json'))) ?? {};
      return { tokenizer: new Tokenizer(json, config), checkedAtMs };
    } catch {
      // An unreadable or unsupported tokenizer behaves like a missing one: the estimate applies.
      return { tokenizer: null, checkedAtMs };
    }
  }
}
