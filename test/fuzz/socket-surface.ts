/**
 * A property-based fuzz of the Responses WebSocket (fast-check): an upgrade with a key,
 * none, a wrong one or the key subprotocol, then a few messages of every shape: well-formed
 * `response.create` events with fields right or wrong (`generate`, `previous_response_id`,
 * `stream_id`, tools), other event types, JSON that is not an event, text that is not JSON,
 * binary messages, and now and then bytes that are not a WebSocket frame at all. Every run must:
 *   - be refused at the upgrade only with 401/403, never a server fault;
 *   - answer each message: error events with a status below 500 (or an environment code),
 *     or a response's events ending in `response.completed`/`incomplete`/`failed`, never
 *     failed by the server;
 *   - end a protocol violation with its close code (1002, 1007, 1009), never 1011.
 * Outcomes are counted by kind (`opened`, `refused:401`, `error:400`, `completed`, `close:1002`, …).
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { CATALOG_IDS } from '../../src/config/catalog.js';
import type { FuzzTarget } from './http-surface.js';

export interface SocketFuzzStats {
  runs: number;
  outcomes: Map<string, number>;
}

type Message = { kind: 'text'; data: string } | { kind: 'binary'; data: Buffer } | { kind: 'raw'; data: Buffer };

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
const MODELS = ['gpt-oss-120b', ...CATALOG_IDS.slice(0, 4), ...PROTOTYPE_NAMES];
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const ENVIRONMENT_CODES = new Set(['model_not_available', 'upstream_error', 'upstream_timeout']);

const input = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constant([{ type: 'function_call_output', call_id: 'call_1', output: 'x' }]),
  fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'assistant', 'robot'), content: fc.string({ maxLength: 10 }) }), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
);

const create = fc
  .record(
    {
      model: fc.oneof(fc.constantFrom(...MODELS), fc.string({ maxLength: 12 }), fc.integer()),
      input,
      generate: fc.oneof(fc.boolean(), fc.constant('no'), fc.constant(null)),
      store: fc.oneof(fc.boolean(), fc.constant('x')),
      previous_response_id: fc.oneof(fc.constantFrom('resp_unknown', ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 })),
      stream: fc.boolean(),
      stream_id: fc.string({ maxLength: 5 }),
      background: fc.boolean(),
      tools: fc.oneof(fc.constant([{ type: 'function', name: 'f', parameters: { type: 'object' } }]), fc.jsonValue({ maxDepth: 2 })),
      max_output_tokens: fc.oneof(fc.integer(), fc.double()),
      instructions: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()),
    },
    { requiredKeys: ['model', 'input'] },
  )
  .map((fields) => ({ type: 'response.create', ...fields }));

/** A well-formed request (warm-up or not, stored or not): reaches the engine. */
const wellFormed = fc
  .record({ input: fc.string({ maxLength: 30 }), generate: fc.boolean(), store: fc.boolean(), max_output_tokens: fc.integer({ min: 16, max: 256 }) }, { requiredKeys: ['input'] })
  .map((fields) => ({ type: 'response.create', model: 'gpt-oss-120b', ...fields }));

/** A frame no client may send: unmasked, a reserved opcode, or a length that lies. */
const rawFrame = fc.constantFrom(
  Buffer.from([0x81, 0x03, 0x61, 0x62, 0x63]),
  Buffer.from([0x83, 0x80, 0, 0, 0, 0]),
  Buffer.from([0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
  Buffer.from([0xf1, 0x80, 1, 2, 3, 4]),
);

const message: fc.Arbitrary<Message> = fc.oneof(
  { weight: 4, arbitrary: wellFormed.map((event): Message => ({ kind: 'text', data: JSON.stringify(event) })) },
  { weight: 4, arbitrary: create.map((event): Message => ({ kind: 'text', data: JSON.stringify(event) })) },
  { weight: 2, arbitrary: fc.record({ type: fc.oneof(fc.constantFrom('response.steer', 'session.update', '', ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 })) }).map((e): Message => ({ kind: 'text', data: JSON.stringify(e) })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v): Message => ({ kind: 'text', data: JSON.stringify(v) ?? 'null' })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s): Message => ({ kind: 'text', data: s })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 32 }).map((b): Message => ({ kind: 'binary', data: Buffer.from(b) })) },
  { weight: 1, arbitrary: rawFrame.map((data): Message => ({ kind: 'raw', data })) },
);

const run = fc.record({
  auth: fc.constantFrom('key', 'key', 'key', 'key', 'subprotocol', 'none', 'bad'),
  messages: fc.array(message, { minLength: 1, maxLength: 4 }),
});

function connect(target: FuzzTarget, auth: string): Promise<WebSocket | number> {
  const headers: Record<string, string> = {};
  if (auth === 'key') headers.authorization = `Bearer ${target.apiKey}`;
  if (auth === 'bad') headers.authorization = 'Bearer sk-not-a-real-key';
  const protocols = auth === 'subprotocol' ? ['responses', `openai-insecure-api-key.${target.apiKey}`] : [];
  const ws = new WebSocket(`${target.baseUrl.replace(/^http/, 'ws')}/v1/responses`, protocols, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

/** Reads one message's answer; returns its outcome, or a problem. */
function answerOf(ws: WebSocket): Promise<{ outcome: string } | { problem: string }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish({ problem: 'no answer within 10 s' }), 10_000);
    const onMessage = (data: WebSocket.RawData) => {
      let event: any;
      try {
        event = JSON.parse(data.toString());
      } catch {
        return finish({ problem: `a message that is not JSON: ${data.toString().slice(0, 80)}` });
      }
      if (event.type === 'error' && event.sequence_number === undefined) {
        if (typeof event.status !== 'number' || typeof event.error?.message !== 'string') return finish({ problem: `error event without its envelope: ${JSON.stringify(event).slice(0, 160)}` });
        if (event.status >= 500 && !ENVIRONMENT_CODES.has(event.error.code)) return finish({ problem: `server fault: ${JSON.stringify(event).slice(0, 200)}` });
        return finish({ outcome: `error:${event.status}` });
      }
      if (FINAL.has(event.type)) {
        const code = event.response?.error?.code;
        if (event.type === 'response.failed' && !ENVIRONMENT_CODES.has(code)) return finish({ problem: `response failed: ${JSON.stringify(event.response?.error)}` });
        return finish({ outcome: event.type.slice('response.'.length) });
      }
    };
    const onClose = (code: number) => finish(code === 1011 ? { problem: 'closed 1011 (server fault)' } : { outcome: `close:${code}` });
    function finish(result: { outcome: string } | { problem: string }) {
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.off('close', onClose);
      resolve(result);
    }
    ws.on('message', onMessage);
    ws.on('close', onClose);
  });
}

async function checkOne(target: FuzzTarget, input: { auth: string; messages: Message[] }, stats: SocketFuzzStats): Promise<string | null> {
  stats.runs++;
  const count = (outcome: string) => stats.outcomes.set(outcome, (stats.outcomes.get(outcome) ?? 0) + 1);
  const ws = await connect(target, input.auth);
  if (typeof ws === 'number') {
    count(`refused:${ws}`);
    return ws === 401 || ws === 403 ? null : `upgrade answered ${ws}`;
  }
  count('opened');
  try {
    for (const m of input.messages) {
      if (ws.readyState !== WebSocket.OPEN) break;
      const answer = answerOf(ws);
      if (m.kind === 'raw') (ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(m.data);
      else ws.send(m.data, { binary: m.kind === 'binary' });
      const result = await answer;
      if ('problem' in result) return result.problem;
      count(result.outcome);
      if (result.outcome === 'close:1011') return 'closed 1011';
    }
    return null;
  } finally {
    ws.terminate();
  }
}

export async function fuzzSocketSurface(target: FuzzTarget, options: { numRuns: number; seed?: number }): Promise<SocketFuzzStats> {
  const stats: SocketFuzzStats = { runs: 0, outcomes: new Map() };
  await fc.assert(
    fc.asyncProperty(run, async (input) => {
      const problem = await checkOne(target, input, stats);
      if (problem) throw new Error(`WebSocket /v1/responses ${JSON.stringify(input).slice(0, 300)}: ${problem}`);
    }),
    { numRuns: options.numRuns, seed: options.seed },
  );
  return stats;
}

export const describeSocketStats = (stats: SocketFuzzStats): string =>
  `${stats.runs} sockets; outcomes: ${[...stats.outcomes.entries()].sort().map(([k, n]) => `${k}×${n}`).join(' ')}`;
