/**
 * A System One client written from the published wire format (test/helpers/system-one-client.ts,
 * Bearer auth, `jev-latest` by default) works against Sluice by changing only its base
 * URL and key: decisions, the model list, and its error handling on 401, 402 and 422.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { SystemOneClient, SystemOneError } from '../../helpers/system-one-client.js';

let server: TestServer;
let modelsDir: string;
let client: SystemOneClient;

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir, DECISION_DEFAULT_MODEL: 'zlm-v2-iab-classify-edge-enriched' } });
  const { key } = await server.newTenant({ balanceUsd: 5 });
  client = new SystemOneClient({ apiKey: key, baseUrl: `${server.baseUrl}/v1` });
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const refusal = async (p: Promise<unknown>): Promise<SystemOneError> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SystemOneError);
    return err as SystemOneError;
  }
  throw new Error('expected a refusal');
};

describe('an unchanged System One client', () => {
  it('decides with jev-latest over Bearer auth and logs x-typesafe-request-id', async () => {
    const decision = await client.decide('Customer: my invoice was charged twice, please refund.', {
      department: { type: 'choice', instructions: 'Route the ticket', criteria: { billing: 'payments and invoices', technical: null, sales: null } },
      angry: { type: 'noul', instructions: 'Is the customer angry?' },
      urgency: { type: 'score', instructions: 'How urgent?', criteria: ['low', 'medium', 'high'] },
      mentions: { type: 'noul', instructions: 'Is this about Personal Finance?' },
    });
    expect(decision.model).toBe('zlm-v2-iab-classify-edge-enriched');
    expect(Object.keys(decision.answers)).toEqual(['department', 'angry', 'urgency', 'mentions']);
    const dept = decision.answers.department!;
    if (dept.type !== 'choice') throw new Error('choice expected');
    expect(['billing', 'technical', 'sales']).toContain(dept.choice);
    expect(decision.answers.angry!.type).toBe('noul');
    expect(decision.answers.urgency!.type).toBe('score');
    expect(decision.usage.output_tokens).toBe(0);
    expect(decision.usage.input_tokens).toBeGreaterThan(0);
    expect(decision.requestId).toMatch(/\S+/);
    expect(client.requestLog).toContain(decision.requestId);
  });

  it('lists models from the `models` array', async () => {
    const names = (await client.models()).map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(['zlm-v1-moderation-edge', 'zlm-v1-iab-classify-edge', 'zlm-v1-iab-domain-classifier', 'zlm-v2-iab-classify-edge-enriched']));
  });

  it('reads Sluice’s refusals: 401 bad key, 402 no credit, 422 validation detail', async () => {
    const bad = await refusal(new SystemOneClient({ apiKey: 'sk-wrong', baseUrl: `${server.baseUrl}/v1` }).decide('x', { q: { type: 'noul' } }));
    expect(bad.status).toBe(401);
    const broke = await server.newTenant({ balanceUsd: 0 });
    const poor = await refusal(new SystemOneClient({ apiKey: broke.key, baseUrl: `${server.baseUrl}/v1` }).decide('x', { q: { type: 'noul' } }));
    expect(poor.status).toBe(402);
    expect(poor.message).toBe('You exceeded your current quota, please check your plan and billing details.');
    const invalid = await refusal(client.decide('x', { q: { type: 'score', criteria: [] } }));
    expect(invalid.status).toBe(422);
    expect(invalid.message).toBe('body.questions.q.criteria: List should have at least 1 item after validation, not 0');
    expect(invalid.requestId).toMatch(/\S+/);
  });
});
