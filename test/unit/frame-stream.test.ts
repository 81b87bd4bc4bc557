/** The SSE byte stream (http/sse.ts FrameStream): order, backpressure, a client that leaves, and a stream handed over before it opened. */
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { FrameStream } from '../../src/http/sse.js';

const FRAMES = 3_000;
const FRAME = (i: number) => `data: {"i":${String(i).padStart(5, '0')},"pad":"${'x'.repeat(80)}"}\n\n`;

/** `count` frames, counting how many were produced and whether the generator was closed. */
function counted(count: number) {
  const seen = { produced: 0, closed: false };
  async function* frames(): AsyncGenerator<string> {
    try {
      for (let i = 0; i < count; i++) {
        seen.produced++;
        yield FRAME(i);
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, frames: frames() };
}

/** A consumer slower than the producer (one write per event-loop turn) that records how far the producer ran ahead of it. */
function slowReader(seen: { produced: number }) {
  const chunks: Buffer[] = [];
  let consumedBytes = 0;
  let maxAhead = 0;
  const sink = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      consumedBytes += chunk.length;
      maxAhead = Math.max(maxAhead, seen.produced * FRAME(0).length - consumedBytes);
      setImmediate(done);
    },
  });
  return { sink, text: () => Buffer.concat(chunks).toString(), maxAhead: () => maxAhead };
}

describe('FrameStream', () => {
  it('delivers every frame in order, the first already buffered, and runs ahead of a slow reader only by its buffer', async () => {
    const { seen, frames } = counted(FRAMES);
    const first = await frames.next();
    const stream = new FrameStream(frames, first);
    expect(stream.readableLength).toBe(FRAME(0).length);
    const reader = slowReader(seen);
    await pipeline(stream, reader.sink);
    expect(reader.text()).toBe(Array.from({ length: FRAMES }, (_, i) => FRAME(i)).join(''));
    expect(seen.closed).toBe(true);
    // Far more than the stream's buffer (Node's default: 16 kB on Node 20, 64 kB from Node 22)
    // passes through, yet the producer is never further ahead than that buffer, the sink's
    // 1 kB and the frame in hand.
    expect(FRAMES * FRAME(0).length).toBeGreaterThan(4 * stream.readableHighWaterMark);
    expect(reader.maxAhead()).toBeLessThanOrEqual(stream.readableHighWaterMark + 1024 + 2 * FRAME(0).length);
  });

  it('ends at once when there is no first frame', async () => {
    const { frames } = counted(0);
    const stream = new FrameStream(frames, await frames.next());
    const reader = slowReader({ produced: 0 });
    await pipeline(stream, reader.sink);
    expect(reader.text()).toBe('');
  });

  it('closes the frames when destroyed (the client gone), and pulls no more', async () => {
    const { seen, frames } = counted(10_000);
    const stream = new FrameStream(frames, await frames.next());
    const received: string[] = [];
    await new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer) => {
        received.push(chunk.toString());
        if (received.length === 3) {
          stream.destroy();
          resolve();
        }
      });
    });
    await new Promise((resolve) => stream.once('close', resolve));
    const producedAtClose = seen.produced;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.closed).toBe(true);
    expect(seen.produced).toBe(producedAtClose);
    expect(seen.produced).toBeLessThan(10_000);
    expect(received.join('').startsWith(FRAME(0) + FRAME(1))).toBe(true);
  });

  it('handed over before its first frame, pulls it when read and delivers everything', async () => {
    const { seen, frames } = counted(5);
    let failed = false;
    const stream = new FrameStream(frames, undefined, () => (failed = true));
    expect(stream.readableLength).toBe(0);
    expect(seen.produced).toBe(0);
    const reader = slowReader(seen);
    await pipeline(stream, reader.sink);
    expect(reader.text()).toBe(Array.from({ length: 5 }, (_, i) => FRAME(i)).join(''));
    expect(failed).toBe(false);
  });

  it('failing before its first frame, says so and fails with that error; failing later, does not say so', async () => {
    async function* neverOpens(): AsyncGenerator<string> {
      const opening: Promise<string> = Promise.reject(new Error('no capacity'));
      yield await opening;
    }
    const before: unknown[] = [];
    const early = new FrameStream(neverOpens(), undefined, (err) => before.push(err));
    await expect(pipeline(early, slowReader({ produced: 0 }).sink)).rejects.toThrow('no capacity');
    expect(before).toEqual([new Error('no capacity')]);

    async function* failsLater(): AsyncGenerator<string> {
      yield FRAME(0);
      throw new Error('cut');
    }
    const after: unknown[] = [];
    const late = new FrameStream(failsLater(), undefined, (err) => after.push(err));
    await expect(pipeline(late, slowReader({ produced: 0 }).sink)).rejects.toThrow('cut');
    expect(after).toEqual([]);
  });
});
