/** What `logging.bodies: redacted` takes out of a body: credential fields, the caller's own credentials, and known secret shapes. */
import { describe, expect, it } from 'vitest';
import { passesLuhn, redactJson, redactText } from '../../src/domain/request-log/redaction.js';

describe('redactText', () => {
  it.each([
    ['Authorization: Bearer abc.def-123456789', 'Authorization: [redacted]'],
    ['x-api-key=sk-sluice-AAAAAAAAAAAAAAAAAAAA', 'x-api-key=[redacted]'],
    ['use bearer abcdefghijklmnop please', 'use [redacted] please'],
    ['key sk-ant-api03-abcdefghijklmnopqrstuv', 'key [redacted]'],
    ['key sk-proj-abcdefghijklmnopqrstuv!', 'key [redacted]!'],
    ['aws AKIAABCDEFGHIJKLMNOP', 'aws [redacted]'],
    ['gh ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'gh [redacted]'],
    ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl end', 'jwt [redacted] end'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY----- after', '[redacted] after'],
    ['card 4111-1111-1111-1111 ok', 'card [redacted] ok'],
    ['order 1234567890123 is not a card', 'order 1234567890123 is not a card'],
    ['no secrets here, max_tokens 512', 'no secrets here, max_tokens 512'],
  ])('%j → %j', (input, output) => {
    expect(redactText(input)).toBe(output);
  });

  it("takes out the caller's own credentials wherever they appear", () => {
    expect(redactText('my token is plain-credential-value!', ['plain-credential-value'])).toBe('my token is [redacted]!');
  });

  it('checks card numbers with Luhn', () => {
    expect(passesLuhn('4111111111111111')).toBe(true);
    expect(passesLuhn('4111111111111112')).toBe(false);
  });
});

describe('redactJson', () => {
  it('replaces credential fields at any depth and leaves the rest, without changing its input', () => {
    const input = { model: 'm', max_tokens: 5, headers: { Authorization: 'Basic xyz', 'X-Api-Key': 'k' }, list: [{ password: 'p', text: 'Bearer abcdefghijk' }], token_count: 3 };
    const copy = structuredClone(input);
    expect(redactJson(input)).toEqual({
      model: 'm',
      max_tokens: 5,
      headers: { Authorization: '[redacted]', 'X-Api-Key': '[redacted]' },
      list: [{ password: '[redacted]', text: '[redacted]' }],
      token_count: 3,
    });
    expect(input).toEqual(copy);
  });
});
