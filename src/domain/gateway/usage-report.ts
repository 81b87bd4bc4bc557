/**
 * What the outbox keeps of the usage owed to the intermediary until it is reported: each
 * settled call's meters once, under its ids (CallUsage), rather than one event per meter
 * repeating them; the calls of one transaction share one message (UsageReport), so a busy
 * transaction writes one outbox row and the deliverer marks one. The events the
 * intermediary receives are derived from it (eventsOfReport).
 */
import type { MeterQuantity, UsageEvent } from './intermediary.port.js';

/** One settled call. */
export interface CallUsage {
  /** What its events are keyed by (`<key>:<meter>`): the intermediary's request id, else Sluice's. */
  key: string;
  /** `gw-request-id` ('' when absent). */
  requestId: string;
  /** `gw-agent-id` ('' when absent). */
  agentId: string;
  service: string;
  /** ISO 8601. */
  timestamp: string;
  /** Each meter's quantity; `output_tokens` only for models that produce output. */
  usage: Partial<Record<MeterQuantity['meter'], number>>;
}

/** The payload of an intermediary outbox message: calls settled in one transaction. */
export interface UsageReport {
  calls: CallUsage[];
}

/** Messages written before calls were kept once carry their events as sent. */
export interface EventList {
  events: UsageEvent[];
}

const METERS: readonly MeterQuantity['meter'][] = ['input_tokens', 'output_tokens'];

/** The call's events, one per meter (input first), each keyed `<key>:<meter>`. */
export function usageEventsOf(call: CallUsage): UsageEvent[] {
  const events: UsageEvent[] = [];
  for (const meter of METERS) {
    const quantity = call.usage[meter];
    if (quantity === undefined) continue;
    events.push({ requestId: call.requestId, agentId: call.agentId, service: call.service, meter, quantity, timestamp: call.timestamp, idempotencyKey: `${call.key}:${meter}` });
  }
  return events;
}

/** The events a stored report sends, in its calls' order. */
export function eventsOfReport(payload: unknown): UsageEvent[] {
  const report = payload as UsageReport | EventList;
  return 'events' in report ? report.events : report.calls.flatMap(usageEventsOf);
}

/** One report of several reports' calls, in order. */
export function combinedReport(reports: readonly UsageReport[]): UsageReport {
  return { calls: reports.flatMap((report) => report.calls) };
}

/** A stored report as one report per call, each with its key (an older event list stays whole, under `entryKey`). */
export function callReportsOf(payload: unknown, entryKey: string): Array<{ key: string; report: UsageReport | EventList }> {
  const report = payload as UsageReport | EventList;
  if ('events' in report) return [{ key: entryKey, report }];
  return report.calls.map((call) => ({ key: call.key, report: { calls: [call] } }));
}
