/**
 * Reasoning carried without storage: with `store: false` and
 * `include: ["reasoning.encrypted_content"]`, a reasoning item leaves with its text sealed
 * under a server key (`encrypted_content`), and the client sends the item back on the next
 * turn for Sluice to open and carry on to the engine. An adapter implements it
 * (src/adapters/crypto/reasoning-seal.ts); the composition injects it.
 */
export interface ReasoningSeal {
  /** The text, sealed under the current key. */
  seal(text: string): string;
  /** The text `sealed` holds; an invalid-request error naming `param` when no key of this server opens it (another server's, or altered). */
  open(sealed: string, param: string): string;
}
