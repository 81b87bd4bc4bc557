/** Display logic of the operator's activity pages: settlement states, usage reports, payment references, upstream reachability. */
import { time } from './format.js';
import type { CatalogModel, DeploymentState, Holder, OutboxMessage } from './types.js';

/** The chip's tone for a settlement's delivery state. */
export function deliveryTone(state: OutboxMessage['state']): 'ok' | 'bad' | 'busy' {
  if (state === 'delivered') return 'ok';
  if (state === 'dead') return 'bad';
  return 'busy';
}

/** When a settlement went or goes next: delivered at, the next attempt of a pending one, nothing for a dead one. */
export function deliveryWhen(message: OutboxMessage): string {
  if (message.state === 'delivered') return `delivered ${time(message.delivered_at)}`;
  if (message.state === 'pending') return `next attempt ${time(message.next_attempt_at)}`;
  return 'no further attempt';
}

interface ReportEvent {
  agentId?: unknown;
  service?: unknown;
  meter?: unknown;
  quantity?: unknown;
}

interface CallUsage {
  agentId?: unknown;
  service?: unknown;
  usage?: unknown;
}

/** The distinct strings among `values`, comma-joined ('' when none). */
const distinct = (values: unknown[]): string => [...new Set(values.filter((v): v is string => typeof v === 'string'))].join(', ');

/** `a · b · meters`, leaving out empty parts. */
const reportLine = (agents: string, services: string, meters: string): string => [agents, services, meters].filter((part) => part !== '').join(' · ');

/**
 * What an intermediary usage report says, in a line: the agents, the services and each
 * meter's total (`agt_1 · gpt-oss-120b · input_tokens 11, output_tokens 7`), from its
 * calls (`{calls: [{agentId, service, usage: {input_tokens, …}}, …]}`, several when one
 * transaction settled several) or, in messages written before that form, its events. Any
 * other payload is shown as its JSON, cut to 120 characters.
 */
export function summarisePayload(payload: unknown): string {
  const report = (typeof payload === 'object' && payload !== null ? payload : {}) as { calls?: unknown; events?: unknown };
  if (Array.isArray(report.calls) && report.calls.length > 0) {
    const calls = report.calls as CallUsage[];
    const totals = new Map<string, number>();
    for (const call of calls) {
      for (const [meter, quantity] of Object.entries(typeof call.usage === 'object' && call.usage !== null ? call.usage : {})) {
        totals.set(meter, (totals.get(meter) ?? 0) + Number(quantity));
      }
    }
    const meters = [...totals].map(([meter, total]) => `${meter} ${total}`).join(', ');
    const count = calls.length > 1 ? `${calls.length} calls · ` : '';
    return count + reportLine(distinct(calls.map((c) => c.agentId)), distinct(calls.map((c) => c.service)), meters);
  }
  if (Array.isArray(report.events) && report.events.length > 0) {
    const list = report.events as ReportEvent[];
    const first = list[0]!;
    return reportLine(distinct([first.agentId]), distinct([first.service]), list.map((e) => `${String(e.meter)} ${String(e.quantity)}`).join(', '));
  }
  const text = JSON.stringify(payload) ?? 'null';
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** A long reference cut in the middle (`x402:eip155:84532:0x12ab…cdef`); short ones whole. */
export function abbreviate(value: string | null, keep = 28): string {
  if (value === null) return '—';
  if (value.length <= keep) return value;
  const tail = Math.floor(keep / 3);
  return `${value.slice(0, keep - tail - 1)}…${value.slice(-tail)}`;
}

/** A credit holder as the tables show it: the agent id, or a receipt's stored hash abbreviated. */
export function holderLabel(holder: Holder): string {
  return holder.kind === 'agent' ? holder.id : `receipt ${holder.id.slice(0, 12)}…`;
}

export interface Reachability {
  status: 'reachable' | 'unreachable';
  tone: 'ok' | 'bad';
  /** `since 2026-11-25 16:03 UTC (ECONNREFUSED)` for an unreachable upstream. */
  detail: string | null;
}

/** Whether an upstream-backed model's engine answered its last probe; null for in-process models and upstreams not configured. */
/** To the second: a cooldown lasts seconds, not minutes. */
const toSecond = (iso: string) => new Date(Date.parse(iso)).toISOString().slice(0, 19).replace('T', ' ');

/** One deployment's state in words: `ready`, `cooling down until 2026-11-25 16:03:10 UTC`, `unreachable since … (ECONNREFUSED)`. */
export function deploymentState(d: DeploymentState): { tone: 'ok' | 'warn' | 'bad'; text: string } {
  if (d.state === 'cooling_down' && d.until) return { tone: 'warn', text: `cooling down until ${toSecond(d.until)} UTC` };
  if (d.state === 'unreachable' && d.since) return { tone: 'bad', text: `unreachable since ${toSecond(d.since)} UTC${d.reason ? ` (${d.reason})` : ''}` };
  return { tone: 'ok', text: 'ready' };
}

export function reachability(model: Pick<CatalogModel, 'upstream' | 'ready' | 'unreachable_since' | 'unreachable_reason'>): Reachability | null {
  if (!model.upstream || !model.ready) return null;
  if (model.unreachable_since === null) return { status: 'reachable', tone: 'ok', detail: null };
  const since = time(Math.floor(Date.parse(model.unreachable_since) / 1000));
  const reason = model.unreachable_reason ? ` (${model.unreachable_reason})` : '';
  return { status: 'unreachable', tone: 'bad', detail: `since ${since} UTC${reason}` };
}
