/**
 * Where a server's CPU goes, per step of a proxied call, from a V8 CPU profile of its
 * thread (costs nothing unless a bench profiles): every sample is given to the step of the
 * innermost frame on its stack that belongs to one (a SQLite statement run by the usage
 * writer is settling; a socket write made by undici is the upstream call, one made by
 * Node's HTTP server is the server's), and the steps' shares of the samples are applied
 * to the CPU per request measured without the profiler.
 */
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { BenchRow } from './run.js';

export const STEPS = ['auth', 'validation', 'hold', 'upstream call', 'settle', 'serialize', 'HTTP server and framework', 'garbage collector', 'other'] as const;
export type Step = (typeof STEPS)[number];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Rules in order: the first whose test matches a frame names its step. */
const RULES: Array<[Step, (fn: string, url: string) => boolean]> = [
  ['auth', (_, url) => /\/src\/http\/auth\/|\/src\/storage\/rate-limit\/|api-keys\.repository|\/src\/domain\/identity\//.test(url)],
  [
    'validation',
    (fn, url) => /\/src\/wire\/|\/src\/http\/plugins\/json-body|chat-request\.ts|secure-json-parse|\/fastify\/lib\/validation|\/@sinclair\/typebox\//.test(url) || /^validate\d*$/.test(fn),
  ],
  ['settle', (fn, url) => fn === 'settle' || fn === 'settleCall' || /usage-writer\.ts|billing\.service\.ts|usage\.repository\.ts|storefront-debit/.test(url)],
  ['hold', (_, url) => /credit-meter\.ts|storefront-meter\.ts|reservations\.ts|balance-reader\.ts|credit-fit\.ts|input-overhead\.ts|metered-call\.ts|projects\.repository|storefront\.repository/.test(url)],
  ['serialize', (_, url) => /chat-wire\.ts|\/src\/http\/schemas\/|fast-json-stringify|\/fastify\/lib\/reply/.test(url)],
  ['upstream call', (_, url) => /\/src\/inference\/|\/undici\/|chat-runner\.ts|served-call\.ts/.test(url)],
  ['HTTP server and framework', (_, url) => /\/fastify\/|find-my-way|avvio|light-my-request|\/src\/http\/|node:_http_|\/pino/.test(url)],
];

function stepOfFrame(fn: string, url: string): Step | null {
  for (const [step, test] of RULES) if (test(fn, url)) return step;
  return null;
}

/** Microseconds of samples per step (idle and the profiler's own work left out). */
export function stepsOfProfile(profile: CpuProfile): Map<Step, number> {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node);
  }
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

/** Runs `work` with the V8 profiler on this thread; its result and the profile. */
export async function profiled<T>(work: () => Promise<T>): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    // A sample every 100 µs (V8's default is 1 ms): a request costs tens of µs.
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    const result = await work();
    const { profile } = await session.post('Profiler.stop');
    return { result, profile: profile as unknown as CpuProfile };
  } finally {
    session.disconnect();
  }
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

/** For a profile written to disk: `tsx bench/cpu-steps.ts <file.cpuprofile> [cpu µs per request]`. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as CpuProfile;
  for (const row of stepTable(profile, Number(process.argv[3] ?? 100))) console.log(`${row.step.padEnd(28)} ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.micros.toFixed(1)} µs`);
}
