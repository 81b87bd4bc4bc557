/** A usage record for storage tests, paid by its project: 10 in, 5 out, 7 micro-dollars, unless overridden. */
import { newId } from '../../src/domain/shared/ids.js';
import type { UsageRecord } from '../../src/domain/billing/usage.types.js';

export function usageRecord(projectId: string, overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    id: newId('usage_'),
    projectId,
    keyId: null,
    payer: { kind: 'project', id: projectId },
    model: 'm',
    route: 'r',
    inputTokens: 10,
    outputTokens: 5,
    costMicros: 7,
    requestId: 'req_x',
    status: 200,
    createdAtMs: Date.now(),
    ...overrides,
  };
}
