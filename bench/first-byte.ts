/**
 * The stream first-byte figure of the proxy and responses benches: how long after the
 * upstream wrote a stream's first chunk its first byte reached the client, per target
 * (direct, a bare proxy, Sluice; a route and its body).
 */
import { runWorker } from './measure.js';
import { BODY } from './proxy-load.js';
import type { Upstream } from './proxy.bench.js';

/**
 * Streams one at a time, in a worker (a client on the server's own thread would read its
 * first byte only when the server's event loop came round to it), the targets taking turns
 * request by request: for each, the time of the client's first body byte and the id the
 * upstream reported its first chunk under.
 */
const FIRST_BYTE_SOURCE = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { targets, count } = workerData;
const agent = new http.Agent({ keepAlive: true });
const one = (target, benchId) => new Promise((resolve, reject) => {
  const request = http.request(target.url + target.path, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'x-bench-id': benchId, ...(target.key ? { 'x-api-key': target.key } : {}) },
  });
  request.on('response', (res) => {
    const id = res.headers['x-request-id'] || benchId;
    let first = 0;
    res.on('data', () => { first ||= performance.timeOrigin + performance.now(); });
    res.on('end', () => resolve({ id, first }));
  });
  request.on('error', reject);
  request.end(target.body);
});
(async () => {
  const seen = targets.map(() => []);
  for (let i = 0; i < count; i++) {
    for (let t = 0; t < targets.length; t++) seen[t].push(await one(targets[t], 'bench-' + i + '-' + t));
  }
  agent.destroy();
  parentPort.postMessage(seen);
})();
`;

/** Where a stream is asked for: `path` and `body` default to a streamed chat completion. */
export interface StreamTarget {
  url: string;
  key: string | null;
  path?: string;
  body?: string;
}

/** A streamed chat completion's body (the proxy bench also warms the stream path with it). */
export const CHAT_STREAM = JSON.stringify({ ...JSON.parse(BODY), stream: true });

/** Per target, each stream's client first byte minus the upstream's first-chunk write (ms). */
export async function firstByteGaps(targets: StreamTarget[], upstream: Upstream, count: number): Promise<number[][]> {
  const requests = targets.map((t) => ({ url: t.url, key: t.key, path: t.path ?? '/v1/chat/completions', body: t.body ?? CHAT_STREAM }));
  const seen = await runWorker<{ id: string; first: number }[][]>(FIRST_BYTE_SOURCE, { targets: requests, count });
  return Promise.all(seen.map((streams) => Promise.all(streams.map(async ({ id, first }) => first - (await upstream.firstChunkOf(id))))));
}
