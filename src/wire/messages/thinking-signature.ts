/**
 * The signature on a thinking block this wire returns: an HMAC-SHA256 of the block's text
 * under the server's key, so that when the block comes back on the next turn Sluice can
 * tell its own reasoning from text a client wrote (Anthropic refuses a modified block;
 * so does this wire). Thinking is never sent back to an engine as content either way:
 * the signature is what the contract asks a client to return unmodified.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const DOMAIN = 'sluice thinking v1\0';

export class ThinkingSigner {
  readonly #key: Buffer;

  constructor(key: string | Buffer) {
    this.#key = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  }

  sign(thinking: string): string {
    return createHmac('sha256', this.#key).update(DOMAIN).update(thinking).digest('base64');
  }

  /** In constant time. */
  verifies(thinking: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(thinking), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
