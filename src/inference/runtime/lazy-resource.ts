/**
 * A model (or any costly resource) loaded on first use, once per process: concurrent
 * first calls await the same load; a failed load is forgotten so the next call retries.
 * With an idle time set, the resource is released once no call has used it for that
 * long, and loaded again on the next call.
 */
export interface LazyResourceOptions<T> {
  load: () => Promise<T>;
  unload: (value: T) => Promise<void>;
  /** Release after this many ms without use; 0 keeps it loaded until close(). */
  idleMs: number;
}

export class LazyResource<T> {
  private loading: Promise<T> | null = null;
  private inUse = 0;
  private timer: NodeJS.Timeout | null = null;
  /** How many times the resource was loaded (a reload after idle release counts). */
  loads = 0;

  constructor(private readonly options: LazyResourceOptions<T>) {}

  get loaded(): boolean {
    return this.loading !== null;
  }

  /** Runs `fn` with the loaded resource; the resource is not released while `fn` runs. */
  async use<R>(fn: (value: T) => Promise<R>): Promise<R> {
    this.inUse++;
    this.clearTimer();
    try {
      return await fn(await this.get());
    } finally {
      this.inUse--;
      this.scheduleRelease();
    }
  }

  private get(): Promise<T> {
    if (!this.loading) {
      this.loads++;
      const loading = this.options.load();
      this.loading = loading;
      loading.catch(() => {
        if (this.loading === loading) this.loading = null;
      });
    }
    return this.loading;
  }

  private scheduleRelease(): void {
    if (this.options.idleMs <= 0 || this.inUse > 0 || !this.loading) return;
    this.clearTimer();
    this.timer = setTimeout(() => void this.release(), this.options.idleMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Unloads now if nothing is using the resource. */
  async release(): Promise<void> {
    this.clearTimer();
    if (this.inUse > 0 || !this.loading) return;
    const loading = this.loading;
    this.loading = null;
    const value = await loading.catch(() => null);
    if (value !== null) await this.options.unload(value);
  }

  async close(): Promise<void> {
    this.clearTimer();
    const loading = this.loading;
    this.loading = null;
    const value = await loading?.catch(() => null);
    if (value !== null && value !== undefined) await this.options.unload(value);
  }
}
