/**
 * A streamed response's first event against a streamed chat completion's first chunk,
 * on the same Sluice (its own process, as `npm start` runs it) in front of the same
 * upstream (proxy.bench.ts's, in a worker): the time from the upstream writing its first
 * chunk to the client's first byte. The two routes take turns stream by stream
 * (first-byte.ts), so load from elsewhere weighs on both alike (target: the response adds
 * at most 0.5 ms).
 */
import type { BenchRow } from './run.js';
import { startSluiceProxy, startUpstream } from './proxy.bench.js';
import { firstByteGaps, type StreamTarget } from './first-byte.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PER_ROUND = 50;

const RESPONSES = { path: '/v1/responses', body: JSON.stringify({ model: 'gpt-oss-120b', stream: true, max_output_tokens: 16, input: 'Say hello in five words.' }) };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export default async function responsesBench(): Promise<BenchRow[]> {
  const upstream = await startUpstream();
  const { server: sluice, key } = await startSluiceProxy(upstream.url);
  // first-byte.ts's default stream is the chat completion of the same words and cap.
  const targets: StreamTarget[] = [{ url: sluice.baseUrl, key }, { url: sluice.baseUrl, key, ...RESPONSES }];
  try {
    await firstByteGaps(targets, upstream, 50);
    const chat: number[] = [];
    const responses: number[] = [];
    const added: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [c, r] = (await firstByteGaps(targets, upstream, PER_ROUND)) as [number[], number[]];
      chat.push(...c);
      responses.push(...r);
      added.push(median(r) - median(c));
    }
    return [
      { name: 'streamed chat: first chunk at the client after the upstream first chunk', value: median(chat), unit: 'ms', note: `p50 of ${chat.length}` },
      { name: 'streamed response: first event at the client after the upstream first chunk', value: median(responses), unit: 'ms', note: `p50 of ${responses.length}` },
      {
        name: 'first event added by responses over chat',
        value: median(added),
        unit: 'ms',
        note: `target ≤ 0.5 ms; median of rounds ${added.map((x) => x.toFixed(3)).join(', ')}`,
      },
    ];
  } finally {
    await sluice.stop();
    await upstream.close();
  }
}
