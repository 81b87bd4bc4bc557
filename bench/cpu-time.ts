/**
 * CPU time read from Linux /proc (utime + stime, 10 ms ticks at USER_HZ = 100: fine over
 * the thousands of requests a bench phase sends), for the benches' CPU-per-request figures,
 * and a main thread's context switches, which say why that CPU per request differs.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime in a /proc stat file, in µs; null where it cannot be read (not Linux, the process gone). */
function statCpuMicros(file: string): number | null {
  try {
    const stat = readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** CPU time (user + system, all its threads) process `pid` has used, in µs; 0 where /proc is missing. */
export const processCpuMicros = (pid: number): number => statCpuMicros(`/proc/${pid}/stat`) ?? 0;

/** CPU time (user + system) of process `pid`'s main thread (the event loop), in µs; 0 where /proc is missing. */
export const mainThreadCpuMicrosOf = (pid: number): number => statCpuMicros(`/proc/${pid}/task/${pid}/stat`) ?? 0;

/**
 * CPU time (µs) each process named `postgres` on this machine has used (the server's
 * backends, its writers and its autovacuum), by pid; empty where /proc is missing.
 */
export function postgresCpuByPid(): Map<number, number> {
  const byPid = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return byPid;
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const cpu = statCpuMicros(`/proc/${pid}/stat`);
    if (cpu !== null) byPid.set(Number(pid), cpu);
  }
  return byPid;
}

/**
 * What PostgreSQL's processes used between two readings of postgresCpuByPid, in µs: a bench
 * that loads one server at a time on a local PostgreSQL gives the database's share of each
 * call from it. A backend started in between counts from zero; one that exited in between
 * takes its time with it (pools close idle connections, so such a backend was mostly idle).
 */
export function postgresCpuSince(before: Map<number, number>): number {
  let used = 0;
  for (const [pid, cpu] of postgresCpuByPid()) used += cpu - (before.get(pid) ?? 0);
  return used;
}

/**
 * CPU time (µs) of this process's main thread, which carries only the server under test
 * when the upstream and the load run in workers; elsewhere than Linux, the event loop's
 * active time, which is close to it when the loop is not saturated.
 */
export function mainThreadCpuMicros(): number {
  return statCpuMicros(`/proc/self/task/${process.pid}/stat`) ?? performance.eventLoopUtilization().active * 1000;
}

/** How often process `pid`'s main thread gave up its core: waiting for something (voluntary) or taken off it by another runnable process (involuntary); zeros where /proc is missing. */
export function mainThreadContextSwitches(pid: number): { voluntary: number; involuntary: number } {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    const count = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { voluntary: count('voluntary_ctxt_switches'), involuntary: count('nonvoluntary_ctxt_switches') };
  } catch {
    return { voluntary: 0, involuntary: 0 };
  }
}
