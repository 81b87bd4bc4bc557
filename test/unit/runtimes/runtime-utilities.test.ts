/** Loading once, idle release and dynamic batching, with fake work. */
import { describe, expect, it } from 'vitest';
import { LazyResource } from '../../../src/inference/runtime/lazy-resource.js';
import { DynamicBatcher } from '../../../src/inference/runtime/dynamic-batcher.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LazyResource', () => {
  it('loads once for concurrent first calls and retries after a failed load', async () => {
    let loads = 0;
    let fail = true;
    const r = new LazyResource({
      load: async () => {
        loads++;
        await sleep(5);
        if (fail) throw new Error('boom');
        return 'model';
      },
      unload: async () => {},
      idleMs: 0,
    });
    await expect(Promise.all([r.use(async (v) => v), r.use(async (v) => v)])).rejects.toThrow('boom');
    expect(loads).toBe(1);
    fail = false;
    expect(await Promise.all([r.use(async (v) => v), r.use(async (v) => v)])).toEqual(['model', 'model']);
    expect(loads).toBe(2);
  });

  it('releases after the idle time, never while in use, and reloads on the next call', async () => {
    const unloaded: string[] = [];
    const r = new LazyResource({ load: async () => 'm', unload: async (v) => void unloaded.push(v), idleMs: 20 });
    await r.use(async () => sleep(40));
    expect(unloaded).toEqual([]);
    await sleep(40);
    expect(unloaded).toEqual(['m']);
    expect(r.loaded).toBe(false);
    await r.use(async () => {});
    expect(r.loads).toBe(2);
    await r.close();
  });
});

describe('DynamicBatcher', () => {
  it('coalesces items queued while a batch runs, sorted by length and bounded', async () => {
    const batches: number[][] = [];
    const b = new DynamicBatcher<number, number>({
      run: async (items) => {
        batches.push(items);
        await sleep(10);
        return items.map((i) => i * 2);
      },
      lengthOf: (i) => i,
      maxBatch: 4,
      maxWaitMs: 0,
    });
    const results = await Promise.all([5, 9, 1, 7, 3, 8, 2].map((i) => b.submit(i)));
    expect(results).toEqual([10, 18, 2, 14, 6, 16, 4]);
    expect(batches[0]).toEqual([5]); // an idle runtime takes the first item at once
    expect(batches.slice(1).every((x) => x.length <= 4)).toBe(true);
    expect(batches.flat().sort()).toEqual([1, 2, 3, 5, 7, 8, 9]);
    expect(b.stats).toMatchObject({ batches: batches.length, items: 7 });
    for (const batch of batches.slice(1)) expect(Math.max(...batch) - Math.min(...batch)).toBeLessThanOrEqual(7);
  });

  it('rejects every caller of a failed batch', async () => {
    const b = new DynamicBatcher<number, number>({ run: async () => Promise.reject(new Error('x')), lengthOf: () => 1, maxBatch: 8, maxWaitMs: 1 });
    await expect(Promise.all([b.submit(1), b.submit(2)])).rejects.toThrow('x');
  });
});
