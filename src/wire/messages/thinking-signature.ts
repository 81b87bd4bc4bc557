/**
 * The signature on a thinking block this wire returns: an HMAC-SHA256 of the block's text
 * under a key derived (HKDF-SHA256, its own purpose) from the server's reasoning secrets
 * (`responses.reasoning_keys`, or the one generated in the data directory), so that when
 * the block comes back on the next turn Sluice can tell its own reasoning from text a
 * client wrote: Anthropic refuses a modified block, and so does this wire. The first
 * secret signs; every secret verifies (rotation). Thinking is never sent back to an engine
 * as content either way: the signature is what the contract asks a client to return unmodified.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const keyOf = (secret: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'sluice-thinking-signature', 'hmac-sha256 v1', 32));

export class ThinkingSigner {
  #keys: Buffer[] | null = null;

  /** `secrets`: read at the first signature (the current first, then previous ones). */
  constructor(private readonly secrets: () => readonly string[]) {}

  sign(thinking: string): string {
    return this.#signWith(this.#keysOf()[0]!, thinking);
  }

  /** In constant time, against every key. */
  verifies(thinking: string, signature: string): boolean {
    const given = Buffer.from(signature, 'utf8');
    let valid = false;
    for (const key of this.#keysOf()) {
      const expected = Buffer.from(this.#signWith(key, thinking), 'utf8');
      if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true;
    }
    return valid;
  }

  #signWith(key: Buffer, thinking: string): string {
    return createHmac('sha256', key).update(thinking).digest('base64');
  }

  #keysOf(): Buffer[] {
    if (this.#keys) return this.#keys;
    const secrets = this.secrets();
    if (secrets.length === 0) throw new Error('thinking signatures need at least one secret');
    this.#keys = secrets.map(keyOf);
    return this.#keys;
  }
}
