/** GLiNER pre/post-processing without a model: words, chunks, span decoding, redaction. */
import { describe, expect, it } from 'vitest';
import { chunkWords, decodeSpans, splitWords } from '../../../src/inference/backends/onnx/gliner/spans.js';
import { redact } from '../../../src/inference/backends/onnx/gliner/pii.js';
import { parseField } from '../../../src/inference/backends/onnx/gliner/gliner2.js';

describe('GLiNER words and spans', () => {
  it('splits words GLiNER-style with character offsets (end exclusive)', () => {
    const text = 'Hello Jane Doe, e-mail: hi@ex.com; Zoë_M.';
    const words = splitWords(text);
    for (const w of words) expect(text.slice(w.start, w.end)).toBe(w.text);
    expect(words.map((w) => w.text)).toEqual(['Hello', 'Jane', 'Doe', ',', 'e-mail', ':', 'hi', '@', 'ex', '.', 'com', ';', 'Zoë_M', '.']);
  });

  it('chunks by word count and by tokens including the prompt', () => {
    const words = splitWords('a b c d e f g');
    expect(chunkWords(words, () => 1, 0, 3, 100).map((c) => c.length)).toEqual([3, 3, 1]);
    expect(chunkWords(words, () => 2, 6, 100, 10).map((c) => c.length)).toEqual([2, 2, 2, 1]);
  });

  it('keeps the best non-overlapping spans above the threshold, in text order', () => {
    const words = splitWords('Jane Doe lives here');
    // logits [1, words=4, maxWidth=2, classes=2]; index ((i * 2) + j) * 2 + c
    const data = new Float32Array(16).fill(-10);
    data[((0 * 2 + 1) * 2) + 0] = 3; // "Jane Doe" person 0.95
    data[((1 * 2 + 0) * 2) + 1] = 4; // "Doe" city 0.98: overlaps, higher: wins
    data[((3 * 2 + 0) * 2) + 1] = 1; // "here" city 0.73
    data[((2 * 2 + 0) * 2) + 0] = 0.1; // "lives" 0.52: under threshold 0.6
    const spans = decodeSpans({ type: 'float32', dims: [1, 4, 2, 2], data }, 0, words, ['person', 'city'], 0.6);
    expect(spans.map((s) => [s.start, s.end, s.label])).toEqual([
      [5, 8, 'city'],
      [15, 19, 'city'],
    ]);
  });

  it('redacts right to left so offsets stay valid', () => {
    const text = 'Call Jane at 555-0134.';
    const entities = [
      { text: 'Jane', label: 'person', start: 5, end: 9, score: 0.9 },
      { text: '555-0134', label: 'phone number', start: 13, end: 21, score: 0.9 },
    ];
    expect(redact(text, entities, 'label', '*')).toBe('Call [PERSON] at [PHONE_NUMBER].');
    expect(redact(text, entities, 'char', '•')).toBe('Call •••• at ••••••••.');
    expect(redact(text, entities, 'generic', '*')).toBe('Call [REDACTED] at [REDACTED].');
  });

  it('parses gliner2 schema fields', () => {
    expect(parseField('email::str::Email address')).toEqual({ name: 'email', type: 'str' });
    expect(parseField('phones::list')).toEqual({ name: 'phones', type: 'list' });
    expect(parseField('title')).toEqual({ name: 'title', type: 'str' });
  });
});
