/**
 * How the dynamic batcher forms batches in a closed loop of clients, with a fake runner
 * whose batches finish when the test says and timers the test fires by hand: no sleeps,
 * no timing assertions.
 */
import { describe, expect, it } from 'vitest';
import { DynamicBatcher, type BatcherTimers } from '../../../src/inference/runtime/dynamic-batcher.js';

/** A runner whose batches stay in flight until finish() is called. */
function fakeRunner() {
  const inFlight: { items: number[]; done: () => void }[] = [];
  const started: number[][] = [];
  return {
    started,
    inFlight,
    run: (items: number[]) =>
      new Promise<number[]>((resolve) => {
        started.push(items);
        inFlight.push({ items, done: () => resolve(items.map((i) => i * 10)) });
      }),
    /** Answers the oldest batch in flight (or the one at `index`). */
    async finish(index = 0) {
      const [batch] = inFlight.splice(index, 1);
      batch!.done();
      await flush();
    },
  };
}

/** Timers fired by the test. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 1;
  const timers: BatcherTimers = {
    set: (fn) => {
      const id = next++;
      pending.set(id, fn);
      return id;
    },
    clear: (id) => void pending.delete(id as number),
  };
  return {
    timers,
    get armed() {
      return pending.size;
    },
    async fire() {
      const fns = [...pending.values()];
      pending.clear();
      for (const fn of fns) fn();
      await flush();
    },
  };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function setup(options: { concurrency?: number; maxBatch?: number } = {}) {
  const runner = fakeRunner();
  const clock = manualTimers();
  const sizes: number[] = [];
  const batcher = new DynamicBatcher<number, number>({
    run: runner.run,
    lengthOf: (i) => i,
    maxBatch: options.maxBatch ?? 32,
    maxWaitMs: 5,
    concurrency: options.concurrency ?? 1,
    timers: clock.timers,
    onBatch: (n) => sizes.push(n),
  });
  return { runner, clock, batcher, sizes };
}

describe('DynamicBatcher batch formation', () => {
  it('runs a lone request on an idle runtime at once', async () => {
    const { runner, clock, batcher } = setup();
    const answer = batcher.submit(7);
    await flush();
    expect(runner.started).toEqual([[7]]);
    expect(clock.armed).toBe(0);
    await runner.finish();
    expect(await answer).toBe(70);
  });

  it('waits for the callers of the last batch to come back instead of running the first one alone', async () => {
    const { runner, clock, batcher, sizes } = setup();
    // Load: one item runs, four queue behind it and form the next batch.
    const first = [1, 2, 3, 4, 5].map((i) => batcher.submit(i));
    await flush();
    await runner.finish();
    expect(runner.started).toEqual([[1], [2, 3, 4, 5]]);
    await runner.finish();
    await Promise.all(first);
    // The four callers return one by one: nothing runs until all four are back.
    const second: Promise<number>[] = [];
    for (const i of [6, 7, 8]) {
      second.push(batcher.submit(i));
      await flush();
      expect(runner.started).toHaveLength(2);
    }
    expect(clock.armed).toBe(1);
    second.push(batcher.submit(9));
    await flush();
    expect(runner.started[2]).toEqual([6, 7, 8, 9]);
    expect(clock.armed).toBe(0);
    await runner.finish();
    expect(await Promise.all(second)).toEqual([60, 70, 80, 90]);
    expect(sizes).toEqual([1, 4, 4]);
    expect(batcher.stats).toEqual({ batches: 3, items: 9, largestBatch: 4 });
  });

  it('runs what it has when the wait runs out, and then expects that many', async () => {
    const { runner, clock, batcher } = setup();
    const warm = [1, 2, 3, 4, 5].map((i) => batcher.submit(i));
    await flush();
    await runner.finish();
    await runner.finish();
    await Promise.all(warm);
    // Only two of the four come back within the wait.
    const a = [batcher.submit(6), batcher.submit(7)];
    await flush();
    expect(runner.started).toHaveLength(2);
    await clock.fire();
    expect(runner.started[2]).toEqual([6, 7]);
    await runner.finish();
    await Promise.all(a);
    // The target is now two: a pair runs without waiting; a lone request after a lone batch too.
    const b = [batcher.submit(8), batcher.submit(9)];
    await flush();
    expect(runner.started[3]).toEqual([8, 9]);
    await runner.finish();
    await Promise.all(b);
    const c = batcher.submit(10);
    await flush();
    await clock.fire();
    expect(runner.started[4]).toEqual([10]);
    await runner.finish();
    await c;
    const d = batcher.submit(11);
    await flush();
    expect(runner.started[5]).toEqual([11]);
    expect(clock.armed).toBe(0);
    await runner.finish();
    await d;
  });

  it('keeps one batch in flight per replica, and splits one call over idle replicas', async () => {
    const { runner, clock, batcher } = setup({ concurrency: 2 });
    // Eight inputs of one call on an idle runtime: two batches of four, side by side.
    const call = batcher.submitAll([8, 1, 7, 2, 6, 3, 5, 4]);
    await flush();
    expect(runner.started.map((b) => b.length)).toEqual([4, 4]);
    expect(runner.started.flat().sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Both replicas busy: new requests queue.
    const queued = [9, 10, 11].map((i) => batcher.submit(i));
    await flush();
    expect(runner.started).toHaveLength(2);
    // A replica frees up: it takes the queue (three items, under the target of four, after the wait).
    await runner.finish();
    expect(runner.started).toHaveLength(2);
    await clock.fire();
    expect(runner.started[2]).toEqual([9, 10, 11]);
    expect(runner.inFlight).toHaveLength(2);
    await runner.finish();
    await runner.finish();
    expect(await call).toEqual([80, 10, 70, 20, 60, 30, 50, 40]);
    expect(await Promise.all(queued)).toEqual([90, 100, 110]);
  });

  it('waits for no more than a batch that is full enough', async () => {
    const { runner, clock, batcher } = setup();
    const warm = Array.from({ length: 13 }, (_, i) => batcher.submit(i + 1));
    await flush();
    await runner.finish();
    expect(runner.started[1]).toHaveLength(12);
    await runner.finish();
    await Promise.all(warm);
    // Twelve callers are coming back; eight already make an efficient batch.
    const back = Array.from({ length: 8 }, (_, i) => batcher.submit(100 + i));
    await flush();
    expect(runner.started[2]).toHaveLength(8);
    expect(clock.armed).toBe(0);
    await runner.finish();
    await Promise.all(back);
  });

  it('never exceeds maxBatch and groups similar lengths when more than a batch is queued', async () => {
    const { runner, batcher } = setup({ maxBatch: 3 });
    const all = [50, 1, 52, 2, 51, 3, 53].map((i) => batcher.submit(i));
    await flush();
    await runner.finish(); // [50]; then the three nearest to the oldest queued item (1)
    expect(runner.started[1]).toEqual([1, 2, 3]);
    await runner.finish();
    expect([...runner.started[2]!].sort()).toEqual([51, 52, 53]);
    await runner.finish();
    expect(await Promise.all(all)).toEqual([500, 10, 520, 20, 510, 30, 530]);
    expect(runner.started.every((b) => b.length <= 3)).toBe(true);
  });
});
