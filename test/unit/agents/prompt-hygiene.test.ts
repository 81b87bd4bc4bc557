/** The billing-header strip on its own: only the head line of a system message, the rest byte for byte. */
import { describe, expect, it } from 'vitest';
import { stripBillingHeader, withoutBillingHeaders } from '../../../src/domain/completions/prompt-hygiene.js';
import type { ChatMessage } from '../../../src/domain/models/inference-backend.port.js';

const LINE = 'x-anthropic-billing-header: cc_version=2.1.337.a1f; cc_entrypoint=cli; cch=3fa9c;';

describe('stripBillingHeader', () => {
  it.each([
    [`${LINE}\nYou are helpful.`, 'You are helpful.'],
    [`${LINE}\r\nYou are helpful.`, 'You are helpful.'],
    [LINE, ''],
    [`You are helpful.\n${LINE}`, `You are helpful.\n${LINE}`],
    [' x-anthropic-billing-header: cch=1;\nA', ' x-anthropic-billing-header: cch=1;\nA'],
    ['', ''],
  ])('%j → %j', (text, expected) => {
    expect(stripBillingHeader(text)).toBe(expected);
  });
});

describe('withoutBillingHeaders', () => {
  it('returns the same array when no system message opens with the line', () => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: LINE }];
    expect(withoutBillingHeaders(messages)).toBe(messages);
  });

  it('strips the content and the first text part of carried parts, leaving other parts', () => {
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } };
    const messages: ChatMessage[] = [
      { role: 'system', content: `${LINE}\nBe brief.`, wireContent: [{ type: 'text', text: LINE }, { type: 'text', text: 'Be brief.' }, image] },
      { role: 'user', content: 'Hi' },
    ];
    expect(withoutBillingHeaders(messages)).toEqual([
      { role: 'system', content: 'Be brief.', wireContent: [{ type: 'text', text: 'Be brief.' }, image] },
      { role: 'user', content: 'Hi' },
    ]);
    expect(messages[0]!.content).toBe(`${LINE}\nBe brief.`);
  });
});
