/**
 * The `nli` zero-shot scorer (decision.scorers) on a random-weight NLI cross-encoder:
 * zero-shot answers are the softmax of the entailment logits of (state, criterion) pairs,
 * a noul's P(yes) the softmax of entailment against contradiction, label-mapped
 * questions still read the pack; and 503 when the NLI model is not installed.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import type { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';
import { findLabel } from '../../../src/domain/shared/classification/label-sets.js';

let server: TestServer;
let modelsDir: string;
let key: string;
const IAB = 'zlm-v1-iab-classify-edge';
const STATE = 'The invoice was charged twice and the customer wants a refund.';

beforeAll(async () => {
  modelsDir = buildTestModels(['all-minilm-l6-v2', 'deberta-v3-small']);
  const yaml = `decision:\n  scorers:\n    ${IAB}: nli\n    zlm-v1-moderation-edge: nli\n  nli_model: deberta-v3-small\nmodels:\n  deberta-v3-small:\n    path: ${path.join(modelsDir, 'deberta-v3-small')}\n`;
  server = await startTestServer({ env: { MODELS_DIR: modelsDir }, yaml });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const decide = (body: unknown) => call(server.baseUrl, 'POST', '/v1/systemone', { key, body });

async function pairs(hypotheses: string[]) {
  const model = server.core.registry.find('deberta-v3-small')!;
  const backend = (await server.core.registry.backendFor(model, 'runTask')) as OnnxBackend;
  return backend.nliPairs(model, STATE, hypotheses);
}

const softmax = (xs: number[]) => {
  const top = Math.max(...xs);
  const w = xs.map((x) => Math.exp(x - top));
  const t = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / t);
};

describe('the nli scorer', () => {
  it('answers choices, scores and nouls from entailment logits of every (state, text) pair', async () => {
    const res = await decide({
      model: IAB,
      state: STATE,
      questions: {
        dept: { type: 'choice', criteria: { billing: 'payments and invoices', technical: null } },
        urgency: { type: 'score', criteria: ['low', 'high'] },
        angry: { type: 'noul', instructions: 'The customer is angry.' },
        topic: { type: 'choice', criteria: { Automotive: null, Sports: null } },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [bill, tech, low, high, angry] = await pairs(['billing: payments and invoices', 'technical', 'low', 'high', 'The customer is angry.']);
    const dept = softmax([bill!.entailment, tech!.entailment]);
    expect(res.body.answers.dept.probabilities.billing).toBeCloseTo(dept[0]!, 5);
    expect(res.body.answers.urgency.probabilities['1']).toBeCloseTo(softmax([low!.entailment, high!.entailment])[1]!, 5);
    expect(res.body.answers.angry.noul).toBeCloseTo(softmax([angry!.entailment, angry!.contradiction])[0]!, 5);
    // label-mapped questions still read the pack's own scores
    const model = server.core.registry.find(IAB)!;
    const backend = (await server.core.registry.backendFor(model, 'runTask')) as OnnxBackend;
    const set = (await backend.scorePack(model, STATE)).sets.get('iab_content_2_2')!;
    const [a, s] = [set.probs[findLabel(set.set, 'Automotive')]!, set.probs[findLabel(set.set, 'Sports')]!];
    expect(res.body.answers.topic.probabilities.Automotive).toBeCloseTo(a / (a + s), 6);
  });

  it('503 model_not_available when the NLI model is not installed', async () => {
    rmSync(path.join(modelsDir, 'deberta-v3-small'), { recursive: true, force: true });
    // A fresh server: the first one remembers the model as ready for a few seconds.
    const yaml = `decision:\n  scorers:\n    zlm-v1-moderation-edge: nli\nmodels:\n  deberta-v3-small:\n    path: ${path.join(modelsDir, 'deberta-v3-small')}\n`;
    const fresh = await startTestServer({ env: { MODELS_DIR: modelsDir }, yaml });
    try {
      const tenant = await fresh.newTenant({ balanceUsd: 5 });
      const body = { model: 'zlm-v1-moderation-edge', state: 'x', questions: { q: { type: 'noul', instructions: 'Is it kind?' } } };
      const res = await call(fresh.baseUrl, 'POST', '/v1/systemone', { key: tenant.key, body });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_available', param: 'model' });
      expect(res.body.error.message).toMatch(/^Model deberta-v3-small is not available: /);
    } finally {
      await fresh.close();
    }
  });
});
