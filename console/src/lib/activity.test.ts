import { describe, expect, it } from 'vitest';
import { abbreviate, deliveryTone, deliveryWhen, deploymentState, holderLabel, reachability, summarisePayload } from './activity.js';
import type { OutboxMessage } from './types.js';

const message = (state: OutboxMessage['state']): OutboxMessage => ({
  id: 'outbox_1',
  target_kind: 'intermediary',
  idempotency_key: 'gwreq_1',
  payload: null,
  state,
  attempts: 1,
  last_error: null,
  next_attempt_at: 1_767_225_660,
  created_at: 1_767_225_600,
  delivered_at: state === 'delivered' ? 1_767_225_601 : null,
});

describe('settlement display logic', () => {
  it('tones each delivery state and says when it went or goes next', () => {
    expect(['pending', 'delivered', 'dead'].map((s) => deliveryTone(s as OutboxMessage['state']))).toEqual(['busy', 'ok', 'bad']);
    expect(deliveryWhen(message('delivered'))).toBe('delivered 2026-01-01 00:00');
    expect(deliveryWhen(message('pending'))).toBe('next attempt 2026-01-01 00:01');
    expect(deliveryWhen(message('dead'))).toBe('no further attempt');
  });

  it("summarises an intermediary usage report (its calls, or the older list of events) by agent, service and meters, and any other payload as JSON", () => {
    const report = {
      events: [
        { requestId: 'r', agentId: 'agt_1', service: 'gpt-oss-120b', meter: 'input_tokens', quantity: 11, idempotencyKey: 'r:input_tokens' },
        { requestId: 'r', agentId: 'agt_1', service: 'gpt-oss-120b', meter: 'output_tokens', quantity: 7, idempotencyKey: 'r:output_tokens' },
      ],
    };
    expect(summarisePayload(report)).toBe('agt_1 · gpt-oss-120b · input_tokens 11, output_tokens 7');
    const call = (agentId: string, usage: object) => ({ key: 'r', requestId: 'r', agentId, service: 'gpt-oss-120b', timestamp: '2026-01-01T00:00:00.000Z', usage });
    expect(summarisePayload({ calls: [call('agt_2', { input_tokens: 5 })] })).toBe('agt_2 · gpt-oss-120b · input_tokens 5');
    const three = { calls: [call('agt_2', { input_tokens: 5, output_tokens: 1 }), call('agt_3', { input_tokens: 6, output_tokens: 2 }), call('agt_2', { input_tokens: 7, output_tokens: 3 })] };
    expect(summarisePayload(three)).toBe('3 calls · agt_2, agt_3 · gpt-oss-120b · input_tokens 18, output_tokens 6');
    expect(summarisePayload({ n: 1 })).toBe('{"n":1}');
    expect(summarisePayload(null)).toBe('null');
    expect(summarisePayload({ text: 'x'.repeat(200) })).toHaveLength(120);
  });
});

describe('storefront display logic', () => {
  it('cuts long references in the middle and keeps short ones', () => {
    expect(abbreviate('card:chk_1')).toBe('card:chk_1');
    expect(abbreviate(`x402:eip155:84532:0x${'ab'.repeat(32)}`)).toBe('x402:eip155:84532:…babababab');
    expect(abbreviate(null)).toBe('—');
  });

  it('names an agent by its id and a receipt by the start of its stored hash', () => {
    expect(holderLabel({ kind: 'agent', id: 'agt_alpha' })).toBe('agt_alpha');
    expect(holderLabel({ kind: 'receipt', id: 'f'.repeat(64) })).toBe('receipt ffffffffffff…');
  });
});

describe('upstream reachability', () => {
  const model = { upstream: true, ready: true, unreachable_since: null, unreachable_reason: null };
  it('reachable, unreachable since when and why, or nothing for in-process and unconfigured models', () => {
    expect(reachability(model)).toEqual({ status: 'reachable', tone: 'ok', detail: null });
    expect(reachability({ ...model, unreachable_since: '2026-11-25T16:03:12.000Z', unreachable_reason: 'ECONNREFUSED' })).toEqual({
      status: 'unreachable',
      tone: 'bad',
      detail: 'since 2026-11-25 16:03 UTC (ECONNREFUSED)',
    });
    expect(reachability({ ...model, upstream: false })).toBeNull();
    expect(reachability({ ...model, ready: false })).toBeNull();
  });
});

describe('deployment states', () => {
  const d = { id: 'gpu-a', state: 'ready' as const, until: null, since: null, reason: null };
  it('ready, cooling down until when (to the second), or unreachable since when and why', () => {
    expect(deploymentState(d)).toEqual({ tone: 'ok', text: 'ready' });
    expect(deploymentState({ ...d, state: 'cooling_down', until: '2026-11-25T16:03:12.500Z' })).toEqual({ tone: 'warn', text: 'cooling down until 2026-11-25 16:03:12 UTC' });
    expect(deploymentState({ ...d, state: 'unreachable', since: '2026-11-25T16:03:12.000Z', reason: 'ECONNREFUSED' })).toEqual({
      tone: 'bad',
      text: 'unreachable since 2026-11-25 16:03:12 UTC (ECONNREFUSED)',
    });
  });
});
