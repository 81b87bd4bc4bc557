/**
 * The server's log destination (src/observability/log-destination.ts), on a real file:
 * lines are gathered and written off the main thread, a lone line by the next timed
 * flush, a batch over LOG_BATCH_BYTES in full, every byte exactly once, and an idle
 * destination writes nothing and holds no timer (an idle server's main thread sleeps).
 * Each write is seen through the destination's documented `write` event (bytes written).
 */
import { openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../helpers/databases.js';
import { LOG_BATCH_BYTES, LOG_FLUSH_MS, gatheringLogDestination, type LogDestination } from '../../src/observability/log-destination.js';

/** The real timer, taken before any test fakes the clock, so waitFor works under fake timers too. */
const realSetTimeout = globalThis.setTimeout;
const sleep = (ms: number) => new Promise((resolve) => realSetTimeout(resolve, ms));

async function waitFor(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within 10 s: ${what}`);
    await sleep(10);
  }
}

const open: LogDestination[] = [];

function destination(): { file: string; log: LogDestination; writes: number[] } {
  const file = path.join(tempDir('sluice-log-'), 'server.log');
  const log = gatheringLogDestination(openSync(file, 'a'));
  open.push(log);
  const writes: number[] = [];
  log.on('write', (bytes: number) => writes.push(bytes));
  return { file, log, writes };
}

const line = (msg: string) => `${JSON.stringify({ level: 30, msg })}\n`;

afterEach(() => {
  vi.useRealTimers();
  for (const log of open.splice(0)) log.destroy();
});

describe('the log destination', () => {
  it('writes nothing while idle', async () => {
    const { file, writes } = destination();
    await sleep(LOG_FLUSH_MS * 5);
    expect(writes).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('gathers a lone line, writes it at the next timed flush, then nothing more', async () => {
    const { file, log, writes } = destination();
    const quiet = line('a quiet request');
    log.write(quiet);
    expect(readFileSync(file, 'utf8')).toBe('');
    await waitFor(() => readFileSync(file, 'utf8') === quiet, 'the lone line written');
    await sleep(LOG_FLUSH_MS * 5);
    expect(writes).toEqual([Buffer.byteLength(quiet)]);
    expect(readFileSync(file, 'utf8')).toBe(quiet);
  });

  it('writes a batch larger than LOG_BATCH_BYTES in full, and counts multi-byte lines so later lone lines are still flushed', async () => {
    const { file, log, writes } = destination();
    const batch = Array.from({ length: 80 }, (_, i) => line(`requête n° ${i} — réponse envoyée`));
    const text = batch.join('');
    expect(Buffer.byteLength(text)).toBeGreaterThan(LOG_BATCH_BYTES);
    for (const l of batch) log.write(l);
    await waitFor(() => readFileSync(file, 'utf8') === text, 'the batch written');
    const later = line('après le lot — plus tard');
    log.write(later);
    await waitFor(() => readFileSync(file, 'utf8') === text + later, 'the later lone line written');
    await sleep(LOG_FLUSH_MS * 5);
    expect(readFileSync(file, 'utf8')).toBe(text + later);
    expect(writes.every((bytes) => bytes > 0)).toBe(true);
    expect(writes.reduce((sum, bytes) => sum + bytes, 0)).toBe(Buffer.byteLength(text + later));
  });

  it('holds a timer only while a line waits to be written', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { file, log, writes } = destination();
    expect(vi.getTimerCount()).toBe(0);
    const quiet = line('one request, then quiet');
    log.write(quiet);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    await waitFor(() => writes.length > 0, 'the lone line written');
    expect(writes).toEqual([Buffer.byteLength(quiet)]);
    expect(readFileSync(file, 'utf8')).toBe(quiet);
    // The tick that flushed armed one more, which finds nothing unwritten and stops.
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(LOG_FLUSH_MS * 10);
    expect(writes).toEqual([Buffer.byteLength(quiet)]);
  });
});
