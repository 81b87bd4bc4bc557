/**
 * The model's own tokenizer (tokenizer.json + tokenizer_config.json through
 * @huggingface/tokenizers) with what the library leaves out: truncation that keeps the
 * special tokens of the model's template, pairs truncated on the first text only, and
 * padded int64 batches ready to feed a graph.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { WireTensor } from '../../runtime/ort-runtime.js';

export interface Encoded {
  ids: number[];
  typeIds: number[];
}

export class TextTokenizer {
  /** Special tokens the template puts before a single text. */
  private readonly prefixLength: number;

  constructor(readonly inner: Tokenizer) {
    const bare = inner.encode('a', { add_special_tokens: false }).ids;
    const full = inner.encode('a', { add_special_tokens: true }).ids;
    this.prefixLength = Math.max(0, full.indexOf(bare[0]!));
  }

  static async fromDir(dir: string): Promise<TextTokenizer> {
    const json = JSON.parse(await readFile(path.join(dir, 'tokenizer.json'), 'utf8')) as object;
    let config: object = {};
    try {
      config = JSON.parse(await readFile(path.join(dir, 'tokenizer_config.json'), 'utf8')) as object;
    } catch {
      // tokenizer_config.json is optional; the defaults serve models without one.
    }
    return new TextTokenizer(new Tokenizer(json, config));
  }

  /** The special tokens the template puts before and after a single text ([CLS] … [SEP]). */
  templateIds(): { prefix: number[]; suffix: number[] } {
    const bare = this.ids('a');
    const full = this.inner.encode('a', { add_special_tokens: true }).ids;
    return { prefix: full.slice(0, this.prefixLength), suffix: full.slice(this.prefixLength + bare.length) };
  }

  idOf(token: string): number | undefined {
    return this.inner.token_to_id(token);
  }

  /** Token ids without special tokens. */
  ids(text: string): number[] {
    return this.inner.encode(text, { add_special_tokens: false }).ids;
  }

  /** Tokens the model sees for `text`, special tokens included. */
  count(text: string): number {
    return this.inner.encode(text, { add_special_tokens: true }).ids.length;
  }

  decode(ids: number[], skipSpecial = true): string {
    return ids.length === 0 ? '' : this.inner.decode(ids, { skip_special_tokens: skipSpecial });
  }

  /** Encodes with special tokens; text beyond `maxLength` tokens is cut, the template kept. */
  encode(text: string, maxLength: number, pair?: string): Encoded {
    const full = this.inner.encode(text, { add_special_tokens: true, text_pair: pair ?? null, return_token_type_ids: true });
    const typeIds = full.token_type_ids ?? new Array<number>(full.ids.length).fill(0);
    if (full.ids.length <= maxLength) return { ids: full.ids, typeIds };
    const first = this.ids(text);
    const keep = Math.max(0, first.length - (full.ids.length - maxLength));
    // full = prefix + first + rest (rest: separators, the pair, closing specials).
    const restStart = this.prefixLength + first.length;
    const cut = (xs: number[]) => [...xs.slice(0, this.prefixLength + keep), ...xs.slice(restStart)].slice(0, maxLength);
    return { ids: cut(full.ids), typeIds: cut(typeIds) };
  }
}

/** Right-padded [batch, maxLen] input_ids / attention_mask / token_type_ids. */
export function padBatch(rows: readonly Encoded[], padId: number): Record<'input_ids' | 'attention_mask' | 'token_type_ids', WireTensor> {
  const width = Math.max(1, ...rows.map((r) => r.ids.length));
  const ids = new BigInt64Array(rows.length * width).fill(BigInt(padId));
  const mask = new BigInt64Array(rows.length * width);
  const types = new BigInt64Array(rows.length * width);
  rows.forEach((row, b) => {
    for (let t = 0; t < row.ids.length; t++) {
      ids[b * width + t] = BigInt(row.ids[t]!);
      mask[b * width + t] = 1n;
      types[b * width + t] = BigInt(row.typeIds[t] ?? 0);
    }
  });
  const dims = [rows.length, width];
  return {
    input_ids: { type: 'int64', dims, data: ids },
    attention_mask: { type: 'int64', dims, data: mask },
    token_type_ids: { type: 'int64', dims, data: types },
  };
}

/** Only the feeds a session declares (exports differ on token_type_ids). */
export function pickFeeds<T>(feeds: Record<string, T>, inputNames: readonly string[]): Record<string, T> {
  return Object.fromEntries(Object.entries(feeds).filter(([name]) => inputNames.includes(name)));
}
