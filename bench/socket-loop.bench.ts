/**
 * A 20-tool-call agent loop over the Responses API's WebSocket mode against the same loop
 * over HTTP, on one Sluice (its own process, as `npm start` runs it) in front of one
 * engine (a worker) that answers each turn with a streamed tool call until the loop's
 * last turn. Each turn sends the previous tool call's output. Three clients, taking turns
 * loop by loop (order flipping each round):
 * - `socket`: one WebSocket for the loop, `store: false`, each turn `previous_response_id`
 *   plus the new item (the socket keeps the conversation);
 * - `http chained`: POST /v1/responses with `stream: true`, stored (the default), each turn
 *   `previous_response_id` plus the new item (read back from the database);
 * - `http full`: POST with `stream: true` and `store: false`, each turn the whole conversation
 *   (how Codex talks to a provider without WebSockets).
 * Each turn is timed from the client's send to its final event read; the figures are the
 * median turn of all rounds (the machines are shared: a mean would carry others' spikes),
 * and each round's median is printed.
 */
import { Worker } from 'node:worker_threads';
import WebSocket from 'ws';
import type { BenchRow } from './run.js';
import { startSluice } from './processes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const TURNS = 21; // 20 tool calls, then the answer
const MODEL = 'agent';

/** An engine that calls `run_step` while the conversation has fewer than 20 tool results, then answers. */
const ENGINE_SOURCE = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
const frame = (delta, finish) => 'data: ' + JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString() || '{}');
    const results = (body.messages || []).filter((m) => m.role === 'tool').length;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (results < 20) {
      res.write(frame({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_' + results, type: 'function', function: { name: 'run_step', arguments: '' } }] }, null));
      res.write(frame({ tool_calls: [{ index: 0, function: { arguments: '{"step":' + results + '}' } }] }, null));
      res.write(frame({}, 'tool_calls'));
    } else {
      res.write(frame({ role: 'assistant', content: 'All steps done.' }, null));
      res.write(frame({}, 'stop'));
    }
    res.write('data: ' + JSON.stringify({ choices: [], usage: { prompt_tokens: 40 + results * 20, completion_tokens: 12, total_tokens: 52 + results * 20 } }) + '\\n\\n');
    res.end('data: [DONE]\\n\\n');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

const TOOLS = [{ type: 'function', name: 'run_step', parameters: { type: 'object', properties: { step: { type: 'integer' } } } }];
const FIRST_INPUT = [{ role: 'user', content: 'Run the twenty steps of the build, one tool call each.' }];

type Item = Record<string, unknown>;
interface Finished {
  id: string;
  output: Item[];
}

const callOf = (output: Item[]): Item | undefined => output.find((item) => item.type === 'function_call');
const outputOf = (call: Item): Item => ({ type: 'function_call_output', call_id: call.call_id, output: `step ${String(call.arguments)} ok` });

/** The final response of an SSE answer. */
async function finishedOf(response: Response): Promise<Finished> {
  const text = await response.text();
  const at = text.lastIndexOf('data: {"type":"response.completed"');
  if (response.status !== 200 || at === -1) throw new Error(`the loop failed: ${response.status} ${text.slice(0, 200)}`);
  return (JSON.parse(text.slice(at + 6).split('\n')[0]!) as { response: Finished }).response;
}

/** Times each call of `turn`. */
function timed<A extends unknown[]>(times: number[], turn: (...args: A) => Promise<Finished>): (...args: A) => Promise<Finished> {
  return async (...args) => {
    const started = performance.now();
    const finished = await turn(...args);
    times.push(performance.now() - started);
    return finished;
  };
}

async function httpLoop(base: string, key: string, mode: 'chained' | 'full'): Promise<number[]> {
  const times: number[] = [];
  const post = timed(times, (body: Item) =>
    fetch(`${base}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(finishedOf));
  let history: Item[] = [...FIRST_INPUT];
  let last = await post({ model: MODEL, stream: true, tools: TOOLS, store: mode === 'chained', input: history });
  for (let turn = 1; turn < TURNS; turn++) {
    const call = callOf(last.output)!;
    if (mode === 'chained') {
      last = await post({ model: MODEL, stream: true, tools: TOOLS, previous_response_id: last.id, input: [outputOf(call)] });
    } else {
      history = [...history, ...last.output, outputOf(call)];
      last = await post({ model: MODEL, stream: true, tools: TOOLS, store: false, input: history });
    }
  }
  if (callOf(last.output)) throw new Error('the loop did not end');
  return times;
}

async function socketLoop(base: string, key: string): Promise<number[]> {
  const times: number[] = [];
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let resolveTurn: (finished: Finished) => void = () => {};
  ws.on('message', (data) => {
    const text = data.toString();
    if (!text.startsWith('{"type":"response.completed"') && !text.startsWith('{"type":"response.failed"') && !text.startsWith('{"type":"error"')) return;
    const event = JSON.parse(text) as { type: string; response?: Finished };
    if (event.type !== 'response.completed') throw new Error(`the loop failed: ${text.slice(0, 200)}`);
    resolveTurn(event.response!);
  });
  const send = timed(times, (event: Item) =>
    new Promise<Finished>((resolve) => {
      resolveTurn = resolve;
      ws.send(JSON.stringify({ type: 'response.create', ...event }));
    }));
  try {
    let last = await send({ model: MODEL, tools: TOOLS, store: false, input: FIRST_INPUT });
    for (let turn = 1; turn < TURNS; turn++) {
      last = await send({ model: MODEL, tools: TOOLS, store: false, previous_response_id: last.id, input: [outputOf(callOf(last.output)!)] });
    }
    if (callOf(last.output)) throw new Error('the loop did not end');
    return times;
  } finally {
    ws.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** The median of the rounds' ratios (each round's two sides ran back to back, under the same load). */
function ratioRow(name: string, top: number[], bottom: number[]): BenchRow {
  const ratios = top.map((t, i) => t / bottom[i]!);
  return { name, value: median(ratios), unit: '×', note: `median of rounds ${ratios.map((r) => r.toFixed(2)).join(', ')}` };
}

function startEngine(): Promise<{ url: string; close: () => Promise<number> }> {
  const worker = new Worker(ENGINE_SOURCE, { eval: true });
  return new Promise((resolve) => worker.once('message', (m: { port: number }) => resolve({ url: `http://127.0.0.1:${m.port}`, close: () => worker.terminate() })));
}

export default async function socketLoopBench(): Promise<BenchRow[]> {
  const engine = await startEngine();
  const sluice = await startSluice('socket-loop', { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'warn' }, `models:\n  ${MODEL}: { backend: openai, base_url: "${engine.url}/v1" }\n`);
  const { key } = await sluice.newTenant(100_000);
  const clients: Array<[string, () => Promise<number[]>]> = [
    ['socket', () => socketLoop(sluice.baseUrl, key)],
    ['http chained', () => httpLoop(sluice.baseUrl, key, 'chained')],
    ['http full', () => httpLoop(sluice.baseUrl, key, 'full')],
  ];
  const perTurn = new Map<string, number[]>(clients.map(([name]) => [name, []]));
  const perRound = new Map<string, number[]>(clients.map(([name]) => [name, []]));
  try {
    for (const [, loop] of clients) await loop(); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? clients : [...clients].reverse();
      for (const [name, loop] of order) {
        const times = await loop();
        perTurn.get(name)!.push(...times);
        perRound.get(name)!.push(median(times));
      }
    }
    const ms = (name: string) => median(perTurn.get(name)!);
    const rounds = (name: string) => `p50 of ${perTurn.get(name)!.length} turns; rounds ${perRound.get(name)!.map((x) => x.toFixed(2)).join(', ')}`;
    return [
      { name: 'per turn over one WebSocket (store: false, previous_response_id)', value: ms('socket'), unit: 'ms', note: rounds('socket') },
      { name: 'per turn over HTTP, stored and chained by previous_response_id', value: ms('http chained'), unit: 'ms', note: rounds('http chained') },
      { name: 'per turn over HTTP, store: false, whole conversation each turn', value: ms('http full'), unit: 'ms', note: rounds('http full') },
      ratioRow('WebSocket turn ÷ HTTP chained turn', perRound.get('socket')!, perRound.get('http chained')!),
      ratioRow('WebSocket turn ÷ HTTP full-history turn', perRound.get('socket')!, perRound.get('http full')!),
    ];
  } finally {
    await sluice.stop();
    await engine.close();
  }
}
