/** A background task the container starts and stops (the batch runner, the janitor). */
export interface BackgroundWorker {
  readonly name: string;
  start(): void;
  /** Stops taking new work and waits for work in hand to finish or be released. */
  stop(): Promise<void>;
}
