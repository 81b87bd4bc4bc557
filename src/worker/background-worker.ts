/** A background task the process starts and stops (the batch runner, the janitor, the outbox deliverer). */
export interface BackgroundWorker {
  readonly name: string;
  start(): void;
  /** Stops taking new work and waits for work in hand to finish or be released. */
  stop(): Promise<void>;
}
