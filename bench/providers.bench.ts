/**
 * What translating to a hosted protocol adds to a call: the same chat call (a system
 * prompt, a question, a tool) made by the `openai`, `azure` and `anthropic` adapters, each
 * against its protocol's fake on loopback, plain and streamed. The fake is one raw
 * node:http server answering each protocol's path with canned bytes of the same answer
 * (OpenAI's chat completion, Anthropic's message, and their SSE streams), so what differs
 * between the three is Sluice's side: the request's mapping, the auth headers, the
 * answer's decoding. Calls run one at a time in rounds that alternate the protocols; each
 * figure is the median over rounds of (p50 of the protocol − p50 of `openai`). Target:
 * each ≤ 0.2 ms.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { BenchRow } from './run.js';
import { loadConfig } from '../src/config/load.js';
import { UPSTREAM_PROTOCOLS } from '../src/inference/upstream/protocols.js';
import { TokenCounter } from '../src/inference/token-counter.js';
import type { ChatParams, ChatStreamEvent } from '../src/domain/models/inference-backend.port.js';
import type { ModelSpec } from '../src/domain/models/model-spec.types.js';
import { tempDir } from '../test/helpers/databases.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TEXT = 'It is 21 degrees and sunny in Oslo, with a light breeze from the west.';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const openaiAnswer = JSON.stringify({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 40, completion_tokens: 17, total_tokens: 57 },
});
const anthropicAnswer = JSON.stringify({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: TEXT }],
  stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 40, output_tokens: 17 },
});
const words = TEXT.split(/(?<= )/);
const openaiStream =
  words.map((w) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })}\n\n`).join('') +
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` +
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 40, completion_tokens: 17 } })}\n\ndata: [DONE]\n\n`;
const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const anthropicStream =
  sse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', usage: { input_tokens: 40, output_tokens: 1 } } }) +
  sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
  words.map((text) => sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })).join('') +
  sse('content_block_stop', { index: 0 }) +
  sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 17 } }) +
  sse('message_stop', {});

/** One fake answering every protocol's path with canned bytes. */
async function startFake(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const stream = Buffer.concat(chunks).includes('"stream":true');
      const anthropic = req.url === '/v1/messages';
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      res.end(anthropic ? (stream ? anthropicStream : anthropicAnswer) : stream ? openaiStream : openaiAnswer);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function models(url: string): Record<string, ModelSpec> {
  const dir = tempDir('sluice-providers-bench-');
  writeFileSync(
    path.join(dir, 'sluice.yaml'),
    `models:
  m-openai: { kind: chat, base_url: "${url}/v1", upstream_model: m, api_key_env: K }
  m-azure: { kind: chat, provider: azure, base_url: "${url}", upstream_model: m, api_key_env: K, price: { input_per_million_usd: 1, output_per_million_usd: 1 } }
  m-anthropic: { kind: chat, provider: anthropic, base_url: "${url}/v1", upstream_model: claude-sonnet-4-5, api_key_env: K }
`,
  );
  const config = loadConfig({ SLUICE_CONFIG: 'sluice.yaml', DATA_DIR: dir, K: 'bench-key-0123456789' }, dir);
  return { openai: config.models['m-openai']!, azure: config.models['m-azure']!, anthropic: config.models['m-anthropic']! };
}

const paramsOf = (model: ModelSpec): ChatParams => ({
  model,
  requestId: 'bench',
  signal: new AbortController().signal,
  options: {},
  messages: [
    { role: 'system', content: 'You answer briefly.' },
    { role: 'user', content: 'What is the weather in Oslo?' },
  ],
  sampling: {
    max_tokens: 200,
    temperature: 0.3,
    tools: [{ type: 'function', function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  },
});

async function drain(events: AsyncGenerator<ChatStreamEvent>): Promise<void> {
  for await (const _ of events);
}

export default async function providersBench(): Promise<BenchRow[]> {
  const fake = await startFake();
  const specs = models(fake.url);
  const deps = { logger: pino({ level: 'silent' }), tokens: new TokenCounter() };
  const adapters = Object.fromEntries(UPSTREAM_PROTOCOLS.map((p) => [p.name, p.create(deps)]));
  const callOf = (protocol: string, stream: boolean) => {
    const model = specs[protocol]!;
    const adapter = adapters[protocol]!;
    const at = { model, deployment: model.binding.deployments[0]! };
    return stream ? () => drain(adapter.chatStream!(paramsOf(model), at)) : () => adapter.chat!(paramsOf(model), at);
  };
  const p50 = async (call: () => Promise<unknown>): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      await call();
      times.push(performance.now() - started);
    }
    return median(times);
  };
  const rows: BenchRow[] = [];
  try {
    for (const stream of [false, true]) {
      const protocols = ['openai', 'azure', 'anthropic'];
      for (const p of protocols) await p50(callOf(p, stream)); // warm-up: JIT and kept-alive connections
      const added: Record<string, number[]> = { azure: [], anthropic: [] };
      const base: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? protocols : [...protocols].reverse();
        const figures: Record<string, number> = {};
        for (const p of order) figures[p] = await p50(callOf(p, stream));
        base.push(figures.openai!);
        for (const p of ['azure', 'anthropic']) added[p]!.push(figures[p]! - figures.openai!);
        if (process.env.BENCH_VERBOSE) console.log(`round ${round + 1} ${stream ? 'stream' : 'json'}: ${order.map((p) => `${p} ${figures[p]!.toFixed(3)} ms`).join(', ')}`);
      }
      const kind = stream ? 'streamed' : 'not streamed';
      rows.push({ name: `openai protocol, chat call p50 (${kind})`, value: median(base), unit: 'ms', note: 'the baseline' });
      for (const p of ['azure', 'anthropic']) {
        rows.push({ name: `${p} protocol − openai, p50 (${kind})`, value: median(added[p]!), unit: 'ms', note: `target ≤ 0.2 ms; rounds ${added[p]!.map((x) => x.toFixed(3)).join(', ')}` });
      }
    }
  } finally {
    await Promise.all(Object.values(adapters).map((a) => a.close()));
    await fake.close();
  }
  return rows;
}
