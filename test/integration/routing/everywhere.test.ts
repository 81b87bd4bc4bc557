/**
 * The same router everywhere: a model of two deployments, the first of which is dead (its
 * engine killed) and the second healthy (a fake engine in its own process), serves every
 * caller of an upstream engine: batch lines, the decision route's `llm` scorer, the
 * gateway and the storefront. Each surface's first call goes to the dead deployment first
 * (round robin starts there), so each proves the retry on the healthy one; the router's
 * metrics and the engine's record of the upstream model say which deployment took what.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { deadEngineUrl, startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { json } from '../../helpers/fake-upstream.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startFakeFacilitator, type FakeFacilitator } from '../../helpers/fake-facilitator.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { gatewayEnvVars, signedCall } from '../gateway/setup.js';
import { PAY_TO } from '../storefront/support.js';
import { fileLines, startBatch, waitForBatch, isTerminal, jsonl } from '../batches/support/batch-helpers.js';
import { newReceiptId, receiptHash } from '../../../src/domain/storefront/receipts.js';
import { newId } from '../../../src/domain/shared/ids.js';

const IAB = 'zlm-v1-iab-classify-edge';
/** Per surface, one model of two deployments: `<surface>-dead` listed first, `<surface>-ok` second. */
const SURFACES = ['batch', 'decide', 'gateway', 'store'] as const;
type Surface = (typeof SURFACES)[number];

let healthy: EngineProcess;
let intermediary: FakeIntermediary;
let facilitator: FakeFacilitator;
let modelsDir: string;
let server: TestServer;
let key: string;

function yaml(dead: string): string {
  const models = SURFACES.map(
    (s) => `  ${s}-llm:
    kind: chat
    price: { input_per_million_usd: 1, output_per_million_usd: 2 }
    deployments:
      - { id: ${s}-dead, base_url: ${dead}, upstream_model: ${s}-dead }
      - { id: ${s}-ok, base_url: ${healthy.baseUrl}, upstream_model: ${s}-ok }
`,
  ).join('');
  return `models:
${models}decision:
  scorers:
    ${IAB}: llm
  llm_model: decide-llm
batches: { retry_base_ms: 20, lease_seconds: 2 }
storefront:
  plans:
    - { id: credits, kind: credits, description: Credits, minimum_usd: "0.01" }
  anonymous_limit_usd: "5.00"
  card: { provider: fake }
`;
}

beforeAll(async () => {
  let dead: string;
  [dead, healthy, intermediary, facilitator] = await Promise.all([deadEngineUrl(), startEngineProcess('healthy'), startFakeIntermediary(), startFakeFacilitator()]);
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  server = await startTestServer({
    yaml: yaml(dead),
    startWorkers: true,
    env: {
      RATE_LIMIT_RPM: '1000000',
      MODELS_DIR: modelsDir,
      ...gatewayEnvVars(intermediary.baseUrl),
      STOREFRONT_FACILITATOR_URL: facilitator.url,
      STOREFRONT_PAY_TO: PAY_TO,
      STOREFRONT_AGENT_KEYS: '{}',
    },
  });
  ({ key } = await server.newTenant({ balanceUsd: 100 }));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([healthy?.kill(), intermediary?.close(), facilitator?.close()]);
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const chatBody = (surface: Surface) => ({ model: `${surface}-llm`, messages: [{ role: 'user', content: 'Hello' }] });

/** `sluice_upstream_requests_total` of one deployment and outcome, from /metrics. */
async function attempts(deploymentId: string, outcome: string): Promise<number> {
  const text = (await call(server.baseUrl, 'GET', '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith('sluice_upstream_requests_total{') && l.includes(`deployment="${deploymentId}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The dead deployment was tried and failed, and the healthy one took every call. */
async function expectRetriedOnHealthy(surface: Surface, calls: number): Promise<void> {
  expect(await attempts(`${surface}-dead`, 'failure')).toBeGreaterThanOrEqual(1);
  expect(await attempts(`${surface}-dead`, 'success')).toBe(0);
  expect(await attempts(`${surface}-ok`, 'success')).toBe(calls);
  expect((await healthy.models())[`${surface}-ok`]).toBe(calls);
}

describe('the same router everywhere', () => {
  it('batch lines', async () => {
    const lines = Array.from({ length: 4 }, (_, i) => ({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: chatBody('batch') }));
    const { batch } = await startBatch(server.baseUrl, key, jsonl(lines));
    const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 4, completed: 4, failed: 0 });
    const output = await fileLines(server.baseUrl, key, done.output_file_id);
    expect(output.map((l) => [l.custom_id, l.response.status_code, l.response.body.model]).sort()).toEqual(
      lines.map((l) => [l.custom_id, 200, 'batch-llm']),
    );
    await expectRetriedOnHealthy('batch', 4);
  }, 60_000);

  it("the decision route's llm scorer", async () => {
    // One question, so one chat call per decision: the engine answers the option letters' logprobs.
    const letters = [
      { token: 'A', logprob: Math.log(0.8), bytes: null },
      { token: 'B', logprob: Math.log(0.2), bytes: null },
    ];
    const answer = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'decide-ok',
      choices: [{ index: 0, message: { role: 'assistant', content: 'A' }, logprobs: { content: [{ ...letters[0], top_logprobs: letters }] }, finish_reason: 'length' }],
      usage: { prompt_tokens: 40, completion_tokens: 1, total_tokens: 41 },
    };
    await healthy.script('/chat/completions', json(answer), json(answer));
    for (let i = 0; i < 2; i++) {
      const res = await call(server.baseUrl, 'POST', '/v1/systemone', {
        key,
        body: { model: IAB, state: 'The invoice was charged twice.', questions: { angry: { type: 'noul', instructions: 'Is the customer angry?' } } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.answers.angry.noul).toBeCloseTo(0.8, 12);
    }
    await expectRetriedOnHealthy('decide', 2);
  });

  it('the gateway', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await signedCall(server.baseUrl, '/gateway/v1/chat/completions', chatBody('gateway'));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.model).toBe('gateway-llm');
      expect(res.body.choices[0].message.content).toBe('Hello from the fake upstream.');
    }
    await expectRetriedOnHealthy('gateway', 2);
  });

  it('the storefront', async () => {
    const receipt = newReceiptId();
    await server.features.storefront.services!.store.purchase({
      id: newId('mov_'),
      sellerId: 'sluice',
      holder: { kind: 'receipt', receiptId: receiptHash(receipt) },
      kind: 'purchase',
      amountMicros: 10_000,
      paymentRef: `test:${receipt}`,
      rail: 'x402',
      detail: null,
      createdAtMs: Date.now(),
    });
    for (const remaining of ['0.009975', '0.00995']) {
      const res = await call(`${server.baseUrl}/storefront`, 'POST', '/gateway/v1/chat/completions', { body: chatBody('store'), headers: { authorization: `Receipt ${receipt}` } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.model).toBe('store-llm');
      // 11 input tokens at $1/M and 7 output tokens at $2/M: 25 micro-dollars a call.
      expect(res.headers.get('x-credit-remaining-usd')).toBe(remaining);
    }
    await expectRetriedOnHealthy('store', 2);
  });
});
