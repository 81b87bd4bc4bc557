/**
 * What the `bedrock` protocol costs a chat call over the `openai` protocol, for the same
 * call (one user message, a short answer, its usage):
 *  (a) through Sluice: p50 latency of sequential non-streamed calls on a model served by
 *      the fake Bedrock (test/helpers/fake-bedrock.ts: the signature's presence checked, not
 *      recomputed, which would cost the fake milliseconds) minus one
 *      served by the fake OpenAI-compatible engine, rounds alternating, in one run (target:
 *      ≤ 0.2 ms). Both fakes run in the bench's process, so this includes the AWS SDK's
 *      signing and HTTP client against undici's pool, not the mapping alone;
 *  (b) the mapping alone: CPU µs per call of the request and answer translation
 *      (map-request.ts, map-response.ts) against the openai protocol's (chatBody,
 *      readChatCompletion) for the same call;
 *  (c) the AWS SDK alone: p50 of `client.send(ConverseCommand)` with a request handler
 *      that answers at once, without a socket (middleware, endpoint rules, SigV4, parsing).
 */
import { Readable } from 'node:stream';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BenchRow } from './run.js';
import { loadConfig } from '../src/config/load.js';
import type { ChatParams } from '../src/domain/models/inference-backend.port.js';
import { converseRequest } from '../src/inference/upstream/protocols/bedrock/map-request.js';
import { readConverse } from '../src/inference/upstream/protocols/bedrock/map-response.js';
import { chatBody } from '../src/inference/upstream/protocols/openai/map-request.js';
import { readChatCompletion } from '../src/inference/upstream/protocols/openai/map-response.js';
import { tempDir } from '../test/helpers/databases.js';
import { startFakeBedrock, TEST_AWS_ENV } from '../test/helpers/fake-bedrock.js';
import { startFakeUpstream } from '../test/helpers/fake-upstream.js';
import { startTestServer } from '../test/helpers/harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 200);
const MAPPING_CALLS = 100_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const BODY = (model: string) => JSON.stringify({ model, max_tokens: 32, temperature: 0.2, messages: [{ role: 'user', content: 'Say hello in five words.' }] });

async function p50Of(url: string, key: string, model: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < CALLS_PER_ROUND; i++) {
    const started = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: BODY(model) });
    await res.text();
    if (res.status !== 200) throw new Error(`${model}: status ${res.status}`);
    times.push(performance.now() - started);
  }
  return median(times);
}

async function throughSluice(): Promise<{ openai: number; bedrock: number; rounds: number[] }> {
  Object.assign(process.env, TEST_AWS_ENV, { AWS_CONFIG_FILE: '/nonexistent/aws-config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials' });
  const [engine, bedrock] = await Promise.all([startFakeUpstream(), startFakeBedrock({ verifySignatures: false })]);
  const yaml = `models:
  local: { kind: chat, base_url: ${engine.baseUrl} }
  cloud:
    kind: chat
    price: { input_per_million_usd: 0, output_per_million_usd: 0 }
    upstream: { protocol: bedrock, deployments: [{ region: us-east-1, base_url: ${bedrock.url}, upstream_model: 'anthropic.claude-x-v1:0' }] }
`;
  const server = await startTestServer({ yaml, env: { RATE_LIMIT_RPM: '100000000' } });
  try {
    const { key } = await server.newTenant({ balanceUsd: 1000 });
    const url = `${server.baseUrl}/v1/chat/completions`;
    await p50Of(url, key, 'local');
    await p50Of(url, key, 'cloud');
    const openai: number[] = [];
    const cloud: number[] = [];
    const rounds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The order flips each round, so neither side always runs warmer.
      const first = round % 2 === 0 ? 'local' : 'cloud';
      const a = await p50Of(url, key, first);
      const b = await p50Of(url, key, first === 'local' ? 'cloud' : 'local');
      const [o, c] = first === 'local' ? [a, b] : [b, a];
      openai.push(o);
      cloud.push(c);
      rounds.push(c - o);
      if (process.env.BENCH_VERBOSE) console.log(`round ${round + 1}: openai p50 ${o.toFixed(3)} ms, bedrock p50 ${c.toFixed(3)} ms, +${(c - o).toFixed(3)} ms`);
    }
    return { openai: median(openai), bedrock: median(cloud), rounds };
  } finally {
    await server.close();
    await Promise.all([engine.close(), bedrock.close()]);
  }
}

function cpuPerCall(work: () => unknown): number {
  for (let i = 0; i < 10_000; i++) work();
  const before = process.cpuUsage();
  for (let i = 0; i < MAPPING_CALLS; i++) work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / MAPPING_CALLS;
}

function mappingAlone(): { openai: number; bedrock: number } {
  const dir = tempDir('sluice-bedrock-bench-');
  writeFileSync(path.join(dir, 'sluice.yaml'), 'models:\n  m: { kind: chat, base_url: "http://127.0.0.1:1/v1" }\n');
  const model = loadConfig({ SLUICE_CONFIG: 'sluice.yaml', DATA_DIR: dir }, dir).models.m!;
  const params = {
    model,
    requestId: 'bench',
    signal: new AbortController().signal,
    options: {},
    messages: [{ role: 'user', content: 'Say hello in five words.' }],
    sampling: { max_tokens: 32, temperature: 0.2 },
  } as ChatParams;
  const openaiAnswer = JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
  });
  const bedrockAnswer = JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: 'Hello there, how are you?' }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 11, outputTokens: 6, totalTokens: 17 },
    metrics: { latencyMs: 7 },
  });
  // Each side's own work: build the body, serialize it, parse the answer, read it.
  const openai = cpuPerCall(() => {
    JSON.stringify(chatBody(params, model, 'm', false));
    readChatCompletion(JSON.parse(openaiAnswer));
  });
  const bedrock = cpuPerCall(() => {
    JSON.stringify(converseRequest(params, model, 'anthropic.claude-x-v1:0'));
    readConverse(JSON.parse(bedrockAnswer));
  });
  return { openai, bedrock };
}

async function sdkAlone(): Promise<number> {
  const body = JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'Hello there.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 11, outputTokens: 3, totalTokens: 14 } });
  const handler = {
    handle: async () => ({ response: { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Readable.from([Buffer.from(body)]) } }),
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
  const client = new BedrockRuntimeClient({ region: 'us-east-1', credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' }, maxAttempts: 1, requestHandler: handler as never });
  const input = { modelId: 'anthropic.claude-x-v1:0', messages: [{ role: 'user' as const, content: [{ text: 'Say hello in five words.' }] }], inferenceConfig: { maxTokens: 32 } };
  for (let i = 0; i < 500; i++) await client.send(new ConverseCommand(input));
  const times: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    const started = performance.now();
    await client.send(new ConverseCommand(input));
    times.push(performance.now() - started);
  }
  client.destroy();
  return median(times);
}

export default async function bedrockBench(): Promise<BenchRow[]> {
  const mapping = mappingAlone();
  const sdk = await sdkAlone();
  const sluice = await throughSluice();
  return [
    { name: 'bedrock p50 − openai p50, same call through Sluice', value: sluice.bedrock - sluice.openai, unit: 'ms', note: `median of ${ROUNDS} rounds of ${CALLS_PER_ROUND} calls (rounds ${sluice.rounds.map((r) => r.toFixed(3)).join(', ')}); target ≤ 0.2 ms` },
    { name: 'openai protocol p50', value: sluice.openai, unit: 'ms' },
    { name: 'bedrock protocol p50', value: sluice.bedrock, unit: 'ms', note: 'AWS SDK: SigV4, HTTP/1.1 keep-alive' },
    { name: 'AWS SDK send() alone, no socket', value: sdk, unit: 'ms', note: 'p50 of 2,000 calls: middleware, endpoint rules, SigV4, parsing' },
    { name: 'request + answer mapping CPU, bedrock', value: mapping.bedrock, unit: 'µs', note: `openai's ${mapping.openai.toFixed(3)} µs for the same call` },
  ];
}
