/**
 * Where a server's CPU goes, per step of a proxied call, from a V8 CPU profile of its main
 * thread (`node --cpu-prof`, the samples of a measured run cut out by time): every sample
 * is given to the step of the innermost frame on its stack that belongs to one (a SQLite statement run by the usage
 * writer is settling; a socket write made by undici is the upstream call, one made by
 * Node's HTTP server is the server's), and the steps' shares of the samples are applied
 * to the CPU per request measured without the profiler.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { BenchRow } from './run.js';

export const STEPS = ['auth', 'validation', 'hold', 'upstream call', 'settle', 'serialize', 'HTTP server and framework', 'garbage collector', 'other'] as const;
export type Step = (typeof STEPS)[number];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}

export interface CpuProfile {
  /** When the profile started, µs on the monotonic clock (`process.hrtime` of any process on the machine). */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Rules in order: the first whose test matches a frame names its step. */
const RULES: Array<[Step, (fn: string, url: string) => boolean]> = [
  ['auth', (_, url) => /\/src\/http\/auth\/|\/src\/storage\/rate-limit\/|api-keys\.repository|\/src\/domain\/identity\//.test(url)],
  [
    'validation',
    (fn, url) => /\/src\/wire\/|\/src\/http\/plugins\/json-body|chat-request\.[jt]s|secure-json-parse|\/fastify\/lib\/validation|\/@sinclair\/typebox\//.test(url) || /^validate\d*$/.test(fn),
  ],
  ['settle', (fn, url) => fn === 'settle' || fn === 'settleCall' || /usage-writer\.[jt]s|billing\.service\.[jt]s|usage\.repository\.[jt]s|storefront-debit/.test(url)],
  ['hold', (_, url) => /credit-meter\.[jt]s|storefront-meter\.[jt]s|reservations\.[jt]s|balance-reader\.[jt]s|credit-fit\.[jt]s|input-overhead\.[jt]s|metered-call\.[jt]s|projects\.repository|storefront\.repository/.test(url)],
  ['serialize', (_, url) => /chat-completions\/writer\.[jt]s|\/src\/http\/schemas\/|fast-json-stringify|\/fastify\/lib\/reply/.test(url)],
  ['upstream call', (_, url) => /\/src\/inference\/|\/undici\/|chat-runner\.[jt]s|served-call\.[jt]s/.test(url)],
  ['HTTP server and framework', (_, url) => /\/fastify\/|find-my-way|avvio|light-my-request|\/src\/http\/|node:_http_|\/pino/.test(url)],
];

function stepOfFrame(fn: string, url: string): Step | null {
  for (const [step, test] of RULES) if (test(fn, url)) return step;
  return null;
}

/** The step of a profile node's samples: its innermost frame that belongs to one (null: idle or the profiler's own work). */
function stepResolver(profile: CpuProfile): (node: ProfileNode) => Step | null {
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const stepOfNode = new Map<number, Step | null>();
  const resolve = (node: ProfileNode): Step | null => {
    const known = stepOfNode.get(node.id);
    if (known !== undefined) return known;
    const { functionName, url } = node.callFrame;
    let step: Step | null;
    if (functionName === '(idle)' || functionName === '(program)' || (url.startsWith('node:inspector') && functionName !== '')) step = null;
    else if (functionName === '(garbage collector)') step = 'garbage collector';
    else {
      step = stepOfFrame(functionName, url);
      const up = parent.get(node.id);
      if (step === null) step = up ? resolve(up) : 'other';
    }
    stepOfNode.set(node.id, step);
    return step;
  };
  return resolve;
}

/** Microseconds of samples per step (idle and the profiler's own work left out). */
export function stepsOfProfile(profile: CpuProfile): Map<Step, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const resolve = stepResolver(profile);
  const micros = new Map<Step, number>(STEPS.map((s) => [s, 0]));
  for (let i = 0; i < profile.samples.length; i++) {
    const step = resolve(byId.get(profile.samples[i]!)!);
    if (step !== null) micros.set(step, micros.get(step)! + (profile.timeDeltas[i] ?? 0));
  }
  return micros;
}

/** Each step's share of `cpuPerRequest` (µs), by its share of the profile's samples. */
export function stepTable(profile: CpuProfile, cpuPerRequest: number): Array<{ step: Step; micros: number; share: number }> {
  const micros = stepsOfProfile(profile);
  const total = [...micros.values()].reduce((a, b) => a + b, 0) || 1;
  return STEPS.map((step) => ({ step, share: micros.get(step)! / total, micros: (micros.get(step)! / total) * cpuPerRequest }));
}

/** Now on the clock of a profile's timestamps (CLOCK_MONOTONIC, as V8's and libuv's), µs. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/** The samples of `profile` taken between `from` and `to` (µs, `monotonicMicros`), the rest left out. */
export function samplesBetween(profile: CpuProfile, from: number, to: number): CpuProfile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let at = profile.startTime;
  profile.samples.forEach((sample, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from || at > to) return;
    samples.push(sample);
    timeDeltas.push(profile.timeDeltas[i] ?? 0);
  });
  if (samples.length === 0) throw new Error(`the profile has no sample between ${from} and ${to} µs (it ran ${profile.startTime}–${at})`);
  return { ...profile, samples, timeDeltas };
}

/** The main thread's profile among those `node --cpu-prof --cpu-prof-dir=<dir>` wrote (in `dir` or a folder of it) as it exited (a worker writes its own; the main thread's is the largest). */
export function mainThreadProfile(dir: string): CpuProfile {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(dir, f));
  const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!largest) throw new Error(`no CPU profile was written into ${dir}`);
  return JSON.parse(readFileSync(largest, 'utf8')) as CpuProfile;
}

/**
 * Bench rows of CPU per request by step, for each named server (profiles of one run each,
 * scaled to the CPU per request measured without the profiler): `steps: a / b` in µs.
 */
export function stepRows(label: string, servers: Array<{ name: string; profile: CpuProfile; cpuPerRequest: number }>): BenchRow[] {
  const tables = servers.map((s) => stepTable(s.profile, s.cpuPerRequest));
  return STEPS.map((step, i) => ({
    name: `${label}: ${step}`,
    value: tables[0]![i]!.micros,
    unit: 'µs',
    note: servers.map((s, j) => `${s.name} ${tables[j]![i]!.micros.toFixed(1)} µs (${(tables[j]![i]!.share * 100).toFixed(0)}%)`).join(', '),
  }));
}

/** The frames whose own samples fell in `step`, the heaviest first: function, file and line, and their share of the step's time. */
export function framesOfStep(profile: CpuProfile, step: Step, count = 25): Array<{ frame: string; share: number }> {
  const stepOf = stepResolver(profile);
  const byFrame = new Map<string, number>();
  let total = 0;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    if (stepOf(node) !== step) return;
    const { functionName, url } = node.callFrame;
    const frame = `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '')}:${node.callFrame.lineNumber ?? 0}`;
    byFrame.set(frame, (byFrame.get(frame) ?? 0) + (profile.timeDeltas[i] ?? 0));
    total += profile.timeDeltas[i] ?? 0;
  });
  return [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, count).map(([frame, micros]) => ({ frame, share: micros / (total || 1) }));
}

/**
 * For a profile written to disk: `tsx bench/cpu-steps.ts <file.cpuprofile> [cpu µs per request]
 * [--last <seconds>] [--frames <step>]`; `--last` keeps the samples of the profile's last
 * seconds (a measured phase that ended the process's life, without its start and warm-up).
 */
if (import.meta.url === `file://${process.argv[1]}`) {
  const whole = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CpuProfile;
  const lastAt = process.argv.indexOf('--last');
  const end = whole.startTime + whole.timeDeltas.reduce((a, b) => a + b, 0);
  const profile = lastAt > 0 ? samplesBetween(whole, end - Number(process.argv[lastAt + 1]) * 1e6, end) : whole;
  for (const row of stepTable(profile, Number(process.argv[3] ?? 100))) console.log(`${row.step.padEnd(28)} ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.micros.toFixed(1)} µs`);
  const framesOf = process.argv.indexOf('--frames');
  if (framesOf > 0) {
    const step = process.argv[framesOf + 1] as Step;
    console.log(`\nframes of ${step}:`);
    for (const { frame, share } of framesOfStep(profile, step)) console.log(`${(share * 100).toFixed(1).padStart(5)}%  ${frame}`);
  }
}
