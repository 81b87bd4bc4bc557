/**
 * The ONNX Runtime worker pool on a generated model: replicas on distinct workers run at
 * the same time, procedures run next to their session (and can be cancelled between
 * steps), retained state pins a sequence of runs to one worker.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { OrtRuntime, type WorkerContext } from '../../../src/inference/runtime/ort-runtime.js';

let modelsDir: string;
let graph: string;
let runtime: OrtRuntime;

/** Worker side: waits `ms`, then answers. */
async function pause(_ctx: WorkerContext, a: { ms: number }) {
  await new Promise((resolve) => setTimeout(resolve, a.ms));
  return { result: 'done' };
}

/** Worker side: loops until cancelled (at most `limit` turns). */
async function spin(ctx: WorkerContext, a: { limit: number }) {
  for (let i = 0; i < a.limit; i++) {
    if (ctx.cancelled()) throw Object.assign(new Error('cancelled'), { code: 'cancelled' });
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return { result: 'finished' };
}

/** Worker side: one forward pass, answering the output's dims. */
async function forward(ctx: WorkerContext, a: { session: string }) {
  const ids = new ctx.ort.Tensor('int64', BigInt64Array.from([2n, 5n, 3n]), [1, 3]);
  const mask = new ctx.ort.Tensor('int64', BigInt64Array.from([1n, 1n, 1n]), [1, 3]);
  const types = new ctx.ort.Tensor('int64', new BigInt64Array(3), [1, 3]);
  const out = await ctx.session(a.session).run({ input_ids: ids, attention_mask: mask, token_type_ids: types });
  return { result: Array.from(out.last_hidden_state.dims as number[]) };
}

beforeAll(() => {
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  graph = path.join(modelsDir, 'all-minilm-l6-v2', 'onnx', 'model.onnx');
  runtime = new OrtRuntime({ workers: 2 });
  runtime.define('test.pause', pause);
  runtime.define('test.spin', spin);
  runtime.define('test.forward', forward);
});

afterAll(async () => {
  await runtime?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

describe('OrtRuntime', () => {
  it('places replicas on distinct workers and runs them side by side', async () => {
    const session = await runtime.load(graph, { replicas: 2 });
    expect(session.replicas).toBe(2);
    expect(runtime.workerStats().map((w) => w.sessions)).toEqual([1, 1]);
    const calls = [runtime.call('test.pause', { ms: 50 }, { session }), runtime.call('test.pause', { ms: 50 }, { session })];
    // Both in flight at once, one per worker.
    expect(runtime.workerStats().map((w) => w.busy)).toEqual([1, 1]);
    expect(await Promise.all(calls)).toEqual(['done', 'done']);
    expect(await runtime.call('test.forward', { session: session.key }, { session })).toEqual([1, 3, 32]);
    await runtime.release(session);
    expect(runtime.workerStats().map((w) => w.sessions)).toEqual([0, 0]);
  });

  it('keeps a state on one worker and colocates the sessions that share it', async () => {
    const first = await runtime.load(graph);
    const second = await runtime.load(graph, { colocateWith: first });
    const feeds = () => ({
      input_ids: { type: 'int64' as const, dims: [1, 2], data: BigInt64Array.from([2n, 3n]) },
      attention_mask: { type: 'int64' as const, dims: [1, 2], data: BigInt64Array.from([1n, 1n]) },
      token_type_ids: { type: 'int64' as const, dims: [1, 2], data: new BigInt64Array(2) },
    });
    const moved = feeds();
    await first.run(moved, { state: 'st', retain: { last_hidden_state: 'h' }, fetch: [] });
    // The second session reads nothing retained here, but runs on the state's worker.
    const out = await second.run(feeds(), { state: 'st' });
    expect(out.last_hidden_state!.dims).toEqual([1, 2, 32]);
    // Feeds are moved to the worker: reusing them is refused, not silently dropped.
    await expect(second.run(moved, { state: 'st' })).rejects.toThrow(/detached/);
    await runtime.dropState('st');
    await runtime.release(first);
    await runtime.release(second);
  });

  it('cancels a procedure between its steps', async () => {
    const session = await runtime.load(graph);
    const controller = new AbortController();
    const call = runtime.call('test.spin', { limit: 10_000 }, { session, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(call).rejects.toMatchObject({ code: 'cancelled' });
    expect(await runtime.call('test.spin', { limit: 2 }, { session })).toBe('finished');
    await runtime.release(session);
  });
});
