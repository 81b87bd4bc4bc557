/**
 * Anthropic's Messages wire against the same chat call over chat completions, on the same
 * Sluice (its own process, as `npm start` runs it) in front of the same upstream
 * (proxy.bench.ts's, in a worker): a non-streamed message's latency against a non-streamed
 * chat completion's (the two taking turns call by call, p50 of each round), and a streamed
 * message's first byte after the upstream's first chunk against a streamed chat
 * completion's (first-byte.ts). Targets: at most 0.1 ms added to the p50, and to the first byte.
 */
import http from 'node:http';
import type { BenchRow } from './run.js';
import { startSluiceProxy, startUpstream } from './proxy.bench.js';
import { firstByteGaps, type StreamTarget } from './first-byte.js';
import { BODY as CHAT_BODY } from './proxy-load.js';
import { median } from './measure.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PER_ROUND = 200;
const STREAMS_PER_ROUND = 50;

/** The chat body's conversation and cap, as a Messages body. */
const MESSAGES_BODY = JSON.stringify({ model: 'gpt-oss-120b', max_tokens: 16, messages: [{ role: 'user', content: 'Say hello in five words.' }] });
const MESSAGES_STREAM = JSON.stringify({ ...JSON.parse(MESSAGES_BODY), stream: true });

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One non-streamed call, its latency in ms (to the last byte of the answer). */
function timedCall(url: string, key: string, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(url + path, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-key': key } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${path} answered ${res.statusCode}`))));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Chat and messages calls taking turns: each one's latencies. */
async function alternate(url: string, key: string, count: number): Promise<[number[], number[]]> {
  const chat: number[] = [];
  const messages: number[] = [];
  for (let i = 0; i < count; i++) {
    chat.push(await timedCall(url, key, '/v1/chat/completions', CHAT_BODY));
    messages.push(await timedCall(url, key, '/v1/messages', MESSAGES_BODY));
  }
  return [chat, messages];
}

export default async function messagesBench(): Promise<BenchRow[]> {
  const upstream = await startUpstream();
  const { server: sluice, key } = await startSluiceProxy(upstream.url);
  const targets: StreamTarget[] = [{ url: sluice.baseUrl, key }, { url: sluice.baseUrl, key, path: '/v1/messages', body: MESSAGES_STREAM }];
  try {
    await alternate(sluice.baseUrl, key, 200);
    await firstByteGaps(targets, upstream, 50);
    const chat: number[] = [];
    const messages: number[] = [];
    const added: number[] = [];
    const chatFirst: number[] = [];
    const messagesFirst: number[] = [];
    const addedFirst: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [c, m] = await alternate(sluice.baseUrl, key, PER_ROUND);
      chat.push(...c);
      messages.push(...m);
      added.push(median(m) - median(c));
      const [cf, mf] = (await firstByteGaps(targets, upstream, STREAMS_PER_ROUND)) as [number[], number[]];
      chatFirst.push(...cf);
      messagesFirst.push(...mf);
      addedFirst.push(median(mf) - median(cf));
    }
    const rounds = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(', ');
    return [
      { name: 'chat completion (non-streamed): latency', value: median(chat), unit: 'ms', note: `p50 of ${chat.length}` },
      { name: 'message (non-streamed): latency', value: median(messages), unit: 'ms', note: `p50 of ${messages.length}` },
      { name: 'p50 added by messages over chat', value: median(added), unit: 'ms', note: `target ≤ 0.1 ms; median of rounds ${rounds(added)}` },
      { name: 'streamed chat: first chunk at the client after the upstream first chunk', value: median(chatFirst), unit: 'ms', note: `p50 of ${chatFirst.length}` },
      { name: 'streamed message: first event at the client after the upstream first chunk', value: median(messagesFirst), unit: 'ms', note: `p50 of ${messagesFirst.length}` },
      { name: 'first byte added by messages over chat', value: median(addedFirst), unit: 'ms', note: `target ≤ 0.1 ms; median of rounds ${rounds(addedFirst)}` },
    ];
  } finally {
    agent.destroy();
    await sluice.stop();
    await upstream.close();
  }
}
