import { describe, expect, it } from 'vitest';
import { callReportsOf, combinedReport, eventsOfReport, usageEventsOf, type CallUsage } from '../../../src/domain/gateway/usage-report.js';
import { gwUsageHeader } from '../../../src/domain/gateway/intermediary-meter.js';

const TS = '2026-11-26T00:00:00.000Z';
const call: CallUsage = { key: 'gwreq_1', requestId: 'gwreq_1', agentId: 'agt_1', service: 'gpt-oss-120b', timestamp: TS, usage: { input_tokens: 12, output_tokens: 7 } };
const embeddings: CallUsage = { key: 'req_abc', requestId: '', agentId: 'agt_2', service: 'bge-small-en-v1-5', timestamp: TS, usage: { input_tokens: 3 } };

describe('the usage the outbox keeps for the intermediary', () => {
  it('gives one event per meter of a call, input first, each keyed <call key>:<meter>', () => {
    expect(usageEventsOf(call)).toEqual([
      { requestId: 'gwreq_1', agentId: 'agt_1', service: 'gpt-oss-120b', meter: 'input_tokens', quantity: 12, timestamp: TS, idempotencyKey: 'gwreq_1:input_tokens' },
      { requestId: 'gwreq_1', agentId: 'agt_1', service: 'gpt-oss-120b', meter: 'output_tokens', quantity: 7, timestamp: TS, idempotencyKey: 'gwreq_1:output_tokens' },
    ]);
  });

  it('reports no output meter for a model that produces none, keyed by Sluice’s id when the intermediary sent none', () => {
    expect(usageEventsOf(embeddings)).toEqual([
      { requestId: '', agentId: 'agt_2', service: 'bge-small-en-v1-5', meter: 'input_tokens', quantity: 3, timestamp: TS, idempotencyKey: 'req_abc:input_tokens' },
    ]);
  });

  it('combines reports in order, sends every call’s events, and splits back into one report per call', () => {
    const combined = combinedReport([{ calls: [call] }, { calls: [embeddings] }]);
    expect(combined).toEqual({ calls: [call, embeddings] });
    expect(eventsOfReport(combined).map((e) => e.idempotencyKey)).toEqual(['gwreq_1:input_tokens', 'gwreq_1:output_tokens', 'req_abc:input_tokens']);
    expect(callReportsOf(combined, 'gwreq_1')).toEqual([
      { key: 'gwreq_1', report: { calls: [call] } },
      { key: 'req_abc', report: { calls: [embeddings] } },
    ]);
  });

  it('sends a message written before calls were kept once (its events listed) as written, and never splits it', () => {
    const older = { events: usageEventsOf(call) };
    expect(eventsOfReport(older)).toEqual(older.events);
    expect(callReportsOf(older, 'gwreq_1')).toEqual([{ key: 'gwreq_1', report: older }]);
  });

  it('is what gw-usage says', () => {
    expect(gwUsageHeader(call.usage)).toBe('input_tokens=12, output_tokens=7');
    expect(gwUsageHeader(embeddings.usage)).toBe('input_tokens=3');
    expect(gwUsageHeader({ input_tokens: 0, output_tokens: 0 })).toBe('input_tokens=0, output_tokens=0');
  });
});
