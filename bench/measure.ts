/** Measuring helpers the in-process and HTTP benches share. */

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
