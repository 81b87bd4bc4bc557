/** The streaming JSONL splitter and validator, fed chunk boundaries a socket or disk might produce. */
import { describe, expect, it } from 'vitest';
import { splitJsonlLines } from '../../../src/domain/batches/jsonl-lines.js';
import { validateBatchInput } from '../../../src/domain/batches/batch-validator.js';
import { requestLine, jsonl } from './support/batch-helpers.js';

async function* chunked(text: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const buffer = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let i = 0; i < buffer.length; i += size) yield buffer.subarray(i, i + size);
}

async function collect(text: string | Buffer, size: number, maxLineBytes = 1000) {
  const out = [];
  for await (const line of splitJsonlLines(chunked(text, size), { maxLineBytes })) {
    out.push({ no: line.no, text: line.bytes.toString(), start: line.start, end: line.end, oversize: line.oversize, blank: line.blank });
  }
  return out;
}

describe('splitJsonlLines', () => {
  const text = 'a\r\n\nbb\n  \ncccc';
  for (const size of [1, 2, 3, 5, 64]) {
    it(`gives the same lines for chunks of ${size} byte(s)`, async () => {
      expect(await collect(text, size)).toEqual([
        { no: 1, text: 'a', start: 0, end: 3, oversize: false, blank: false },
        { no: 2, text: '', start: 3, end: 4, oversize: false, blank: true },
        { no: 3, text: 'bb', start: 4, end: 7, oversize: false, blank: false },
        { no: 4, text: '  ', start: 7, end: 10, oversize: false, blank: true },
        { no: 5, text: 'cccc', start: 10, end: 14, oversize: false, blank: false },
      ]);
    });
  }

  it('flags a line over the limit without keeping it, on any chunking', async () => {
    const body = `${'x'.repeat(10)}\n${'y'.repeat(11)}\n${'z'.repeat(10)}\r\n`;
    for (const size of [1, 4, 100]) {
      const lines = await collect(body, size, 10);
      expect(lines.map((l) => [l.no, l.oversize, l.text.length])).toEqual([
        [1, false, 10],
        [2, true, 0],
        [3, false, 10],
      ]);
    }
  });

  it('numbers lines from firstLineNo and offsets from startOffset', async () => {
    const lines = [];
    for await (const l of splitJsonlLines(chunked('p\nq\n', 1), { maxLineBytes: 10, firstLineNo: 7, startOffset: 100 })) {
      lines.push([l.no, l.start, l.end]);
    }
    expect(lines).toEqual([
      [7, 100, 102],
      [8, 102, 104],
    ]);
  });
});

describe('validateBatchInput', () => {
  it('plans contiguous shards covering every request line', async () => {
    const input = jsonl([requestLine('a'), '', requestLine('b'), requestLine('c'), '   ', requestLine('d'), requestLine('e')]);
    const plan = await validateBatchInput(chunked(input, 7), { endpoint: '/v1/chat/completions', shardLines: 2 });
    expect(plan.totalLines).toBe(5);
    expect(plan.shards.map((s) => [s.firstLine, s.lastLine, s.lineCount])).toEqual([
      [1, 3, 2],
      [4, 6, 2],
      [7, 7, 1],
    ]);
    expect(plan.shards[0]!.startByte).toBe(0);
    for (let i = 1; i < plan.shards.length; i++) expect(plan.shards[i]!.startByte).toBe(plan.shards[i - 1]!.endByte);
    expect(plan.shards.at(-1)!.endByte).toBe(Buffer.byteLength(input));
  });

  it('rejects invalid UTF-8 as not valid JSON', async () => {
    const bad = Buffer.concat([Buffer.from('{"custom_id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]);
    await expect(validateBatchInput(chunked(bad, 5), { endpoint: '/v1/chat/completions', shardLines: 10 })).rejects.toMatchObject({
      message: 'Line 1 is not valid JSON',
      line: 1,
    });
  });
});
