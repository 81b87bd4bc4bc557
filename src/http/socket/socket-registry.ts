/**
 * The WebSockets open on this replica: counted per API key (a key may hold
 * `responses.websocket.max_per_key` at once), reported to the metrics, and each told when
 * the server shuts down.
 */
export interface OpenSocket {
  /** The server is shutting down: close once nothing runs (1001). */
  shutDown(): void;
}

export class SocketRegistry {
  readonly #byKey = new Map<string, Set<OpenSocket>>();

  /** `onCount` hears +1 and -1 as sockets open and close (the open-sockets gauge). */
  constructor(private readonly onCount: (delta: number) => void = () => {}) {}

  /** Adds `socket` under `key`; false (and not added) when the key already holds `max`. */
  add(key: string, socket: OpenSocket, max: number): boolean {
    let held = this.#byKey.get(key);
    if (held && held.size >= max) return false;
    if (!held) this.#byKey.set(key, (held = new Set()));
    held.add(socket);
    this.onCount(1);
    return true;
  }

  remove(key: string, socket: OpenSocket): void {
    const held = this.#byKey.get(key);
    if (!held?.delete(socket)) return;
    this.onCount(-1);
    if (held.size === 0) this.#byKey.delete(key);
  }

  shutDown(): void {
    for (const held of this.#byKey.values()) for (const socket of held) socket.shutDown();
  }
}
