/**
 * Anthropic's `ping` while an engine is slow: a stream whose engine goes silent mid-answer
 * for longer than the wire's ping interval (5 s) gets a `ping` event in the silence, between
 * the deltas it separates, and the stream still ends as usual. The engine is a fake on
 * loopback whose second chunk comes 7 s after its first (one interval and a margin, less
 * than two).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { streamChunk } from '../../helpers/fake-upstream-answers.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { inferenceYaml } from '../inference/setup.js';

const MODEL = 'gpt-oss-120b';
const SILENCE_MS = 7_000;

let upstream: FakeUpstream;
let server: TestServer;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl) });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

/** Each event of the stream as `<type>` (a delta as `<type>:<its text>`), in order. */
function eventsOf(text: string): string[] {
  return text
    .trim()
    .split('\n\n')
    .map((frame) => JSON.parse(frame.split('\n')[1]!.slice('data: '.length)) as { type: string; delta?: { text?: string } })
    .map((event) => (event.delta?.text !== undefined ? `${event.type}:${event.delta.text}` : event.type));
}

/** 'Hello', then SILENCE_MS of nothing, then ' world', the finish and [DONE] at once. */
const slowEngine = handler(async (req, res) => {
  const write = (chunk: string | Record<string, unknown>) => res.write(`data: ${JSON.stringify(streamChunk(String(req.body.model), chunk))}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  write('Hello');
  await new Promise((resolve) => setTimeout(resolve, SILENCE_MS));
  write(' world');
  write({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  res.end('data: [DONE]\n\n');
});

describe('a slow engine', () => {
  it(
    'gets a ping in its silence, between the deltas, and the stream ends with message_stop',
    async () => {
      upstream.enqueue('/chat/completions', slowEngine);
      const response = await fetch(`${server.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: MODEL, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(200);
      expect(eventsOf(await response.text())).toEqual([
        'message_start',
        'ping',
        'content_block_start',
        'content_block_delta:Hello',
        'ping',
        'content_block_delta: world',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
    },
    SILENCE_MS + 20_000,
  );
});
