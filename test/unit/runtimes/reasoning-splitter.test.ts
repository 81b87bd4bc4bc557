/** Reasoning/answer separation over arbitrary chunk boundaries. */
import { describe, expect, it } from 'vitest';
import { ReasoningSplitter } from '../../../src/inference/backends/gguf/reasoning.js';

function split(chunks: string[], startsInReasoning = false) {
  const s = new ReasoningSplitter(startsInReasoning);
  let content = '';
  let reasoning = '';
  for (const c of [...chunks.map((x) => s.push(x)), s.flush()]) {
    content += c.content;
    reasoning += c.reasoning;
  }
  return { content, reasoning, saw: s.sawReasoning };
}

describe('ReasoningSplitter', () => {
  it('splits <think>…</think> whatever the chunking', () => {
    const text = '  <think>step one, step two</think>\n\nThe answer.';
    for (let size = 1; size <= text.length; size++) {
      const chunks = Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
      expect(split(chunks)).toEqual({ content: 'The answer.', reasoning: 'step one, step two', saw: true });
    }
  });

  it('leaves plain answers alone, including a later <think> and a lone "<"', () => {
    expect(split(['Hello <think> not reasoning'])).toEqual({ content: 'Hello <think> not reasoning', reasoning: '', saw: false });
    expect(split(['<', '3 you'])).toEqual({ content: '<3 you', reasoning: '', saw: false });
  });

  it('starts inside reasoning when the template opened it, and keeps unfinished reasoning', () => {
    expect(split(['plan</thi', 'nk>done'], true)).toEqual({ content: 'done', reasoning: 'plan', saw: true });
    expect(split(['<think>never closed</th'])).toEqual({ content: '', reasoning: 'never closed</th', saw: true });
  });
});
