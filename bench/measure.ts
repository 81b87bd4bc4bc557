/** Measuring helpers the in-process and HTTP benches share. */
import { Worker } from 'node:worker_threads';

/** The middle value (the upper one of an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Milliseconds `fn` took. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Completions per second of `callers` closed loops, each calling `step` again as soon as it returns, for `seconds`. */
export async function closedLoopRate(step: () => Promise<void>, callers: number, seconds: number): Promise<number> {
  const started = performance.now();
  const until = started + seconds * 1000;
  const counts = await Promise.all(
    Array.from({ length: callers }, async () => {
      let done = 0;
      while (performance.now() < until) {
        await step();
        done++;
      }
      return done;
    }),
  );
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
}

/** A load or client script running in a worker thread (so the main thread carries only the server under test). */
export interface RunningWorker<T> {
  /** The script's one message: its figures. */
  result: Promise<T>;
  stop(): Promise<number>;
}

/** Starts `source` (the script's text) in a worker with `workerData`. */
export function startWorker<T>(source: string, workerData: unknown): RunningWorker<T> {
  const worker = new Worker(source, { eval: true, workerData });
  const result = new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { result, stop: () => worker.terminate() };
}

/** Runs `source` in a worker to its one message, and ends the worker. */
export async function runWorker<T>(source: string, workerData: unknown): Promise<T> {
  const running = startWorker<T>(source, workerData);
  try {
    return await running.result;
  } finally {
    await running.stop();
  }
}
