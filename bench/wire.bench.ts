/**
 * What 8 function tools cost a chat request on Sluice's side of the wire, in CPU: the
 * steps the body takes between the socket and the upstream (parse once, validate once,
 * read into the domain's request, estimate the hold, build and serialize the upstream
 * body), timed for the bench's plain body and for the same body with 8 tools. Each figure
 * is the fastest of many batches, so a busy machine (where a p50 over HTTP swings by
 * milliseconds) lengthens the run rather than the result. Target: at most 0.1 ms added.
 */
import secureJson from 'secure-json-parse';
import type { BenchRow } from './run.js';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../src/domain/shared/json-depth.js';
import { ChatCompletionBody } from '../src/wire/chat-completions/body.js';
import { validatorOf } from '../src/wire/validate.js';
import { chatRequestOf } from '../src/wire/chat-completions/mapper.js';
import { chatInputOf } from '../src/domain/completions/metered-call.js';
import { BODY as PLAIN_BODY, TOOLS_BODY } from './proxy.bench.js';

const BATCH = 200;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 400);
const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;
const validate = validatorOf(ChatCompletionBody);

/** One request's wire path; returns the upstream body's length so nothing is optimised away. */
function wirePath(text: string): number {
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw new Error('too deep');
  const body = secureJson.parse(text, undefined, PARSE_OPTIONS) as unknown;
  if (!validate(body)) throw new Error('invalid');
  const request = chatRequestOf(body as Parameters<typeof chatRequestOf>[0]);
  const { texts } = chatInputOf(request.messages, request.sampling);
  const upstream = Object.assign({ model: 'upstream', messages: request.messages.map((m) => ({ role: m.role, content: m.content })) }, request.sampling);
  return JSON.stringify(upstream).length + texts.length;
}

/** µs per request: the fastest batch. */
function fastest(text: string): number {
  let best = Infinity;
  let sink = 0;
  for (let b = 0; b < BATCHES; b++) {
    const started = performance.now();
    for (let i = 0; i < BATCH; i++) sink += wirePath(text);
    best = Math.min(best, (performance.now() - started) / BATCH);
  }
  if (sink === 0) throw new Error('unreachable');
  return best * 1000;
}

export default async function wireBench(): Promise<BenchRow[]> {
  // Warm both paths (V8 compiles them), then alternate, so drifting load weighs on both.
  fastest(PLAIN_BODY);
  fastest(TOOLS_BODY);
  const plain: number[] = [];
  const tools: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(fastest(PLAIN_BODY));
    tools.push(fastest(TOOLS_BODY));
  }
  const [p, t] = [Math.min(...plain), Math.min(...tools)];
  return [
    { name: 'wire path CPU, plain chat body', value: p, unit: 'µs', note: `${PLAIN_BODY.length} bytes; parse, validate, read, estimate, serialize` },
    { name: 'wire path CPU, the same body with 8 tools', value: t, unit: 'µs', note: `${TOOLS_BODY.length} bytes` },
    { name: 'CPU added by 8 tools', value: (t - p) / 1000, unit: 'ms', note: 'target ≤ 0.1 ms; fastest of 3 alternating rounds of batches' },
  ];
}
