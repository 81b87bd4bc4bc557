/** A counting semaphore: at most `permits` holders at a time, waiters served in order. */
export class Semaphore {
  #available: number;
  readonly #waiters: (() => void)[] = [];

  constructor(readonly permits: number) {
    this.#available = permits;
  }

  async acquire(): Promise<void> {
    if (this.#available > 0) {
      this.#available -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#available += 1;
  }
}
