/**
 * Batch lines and credit holds (src/worker/line-executor.ts waitForHeldCredit): a line
 * refused only because the batch's other lines hold the project's credit waits for them
 * and runs once they are done; only a line whose upstream fails is marked failed.
 *
 * Figures: 1,000 USD per million tokens each way is 1,000 µ$ a token. A line
 * "say req-N" is estimated at its bytes + 8 framing tokens + 8 for the conversation's
 * template as input, plus the model's default cap of 4,096 output tokens: about 4.12 USD.
 * The upstream reports 10 + 5 tokens, so a served line costs 15,000 µ$.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { handler, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { MODEL, isTerminal, requestLines, resultsOf, startBatch, upstreamYaml, waitForBatch } from './support/batch-helpers.js';
import { chatCompletion } from './support/scripted-upstream.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const yaml = upstreamYaml(upstream.baseUrl, { per_batch_concurrency: 32 }).replace(
    '    timeout_ms: 20000\n',
    '    timeout_ms: 20000\n    price: { input_per_million_usd: 1000, output_per_million_usd: 1000 }\n',
  );
  server = await startTestServer({ yaml, startWorkers: true });
});
afterEach(() => upstream.reset());
afterAll(async () => {
  await server.close();
  await upstream.close();
});

/**
 * Answers each line after a short delay (so lines overlap when they may), fails the
 * lines whose content `fails` picks with that status, and counts the calls in flight.
 */
function countingUpstream(fails: (content: string) => number | null): { maxInFlight: () => number } {
  let inFlight = 0;
  let max = 0;
  upstream.setDefault(
    '/chat/completions',
    handler(async (req, res) => {
      inFlight++;
      max = Math.max(max, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
      const content = String(req.body?.messages?.[0]?.content ?? '');
      const status = fails(content);
      res.writeHead(status ?? 200, { 'content-type': 'application/json' });
      const failure = { error: { message: `failure ${status}`, type: 'invalid_request_error', code: null, param: null } };
      res.end(JSON.stringify(status ? failure : chatCompletion(MODEL, `echo: ${content}`)));
    }),
  );
  return { maxInFlight: () => max };
}

const balanceOf = async (projectId: string) => (await server.core.projects.getProject(projectId)).balanceMicros;

it('10 USD, 20 lines without max_tokens, 32 at once: every line runs; only the lines whose upstream fails are failed', async () => {
  const failing = new Map([
    ['say req-4', 400],
    ['say req-11', 503],
    ['say req-17', 400],
  ]);
  const counter = countingUpstream((content) => failing.get(content) ?? null);
  const tenant = await server.newTenant({ balanceUsd: 10 });
  const { batch } = await startBatch(server.baseUrl, tenant.key, requestLines(20));
  const done = await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal);

  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: 20, completed: 17, failed: 3 });
  const { output, errors, seen } = await resultsOf(server.baseUrl, tenant.key, done);
  expect(seen.size).toBe(20);
  expect(output).toHaveLength(17);
  expect(errors.map((l) => l.custom_id).sort()).toEqual(['req-11', 'req-17', 'req-4']);
  expect(errors.map((l) => l.error.code)).not.toContain('insufficient_quota');
  // Each line holds about 4.11 USD: two fit in 10 USD at a time, the others waited.
  expect(counter.maxInFlight()).toBeLessThanOrEqual(2);
  // The default cap fits the balance, so no line was lowered.
  for (const r of upstream.requests) expect(r.body.max_tokens).toBeUndefined();
  const usage = await server.core.projects.listUsage(tenant.projectId, 100);
  expect(usage.items).toHaveLength(17);
  expect(await balanceOf(tenant.projectId)).toBe(10_000_000 - 17 * 15_000);
});

it('on 1 USD, lines without max_tokens run one at a time, each with the cap the balance affords', async () => {
  const counter = countingUpstream(() => null);
  const tenant = await server.newTenant({ balanceUsd: 1 });
  const { batch } = await startBatch(server.baseUrl, tenant.key, requestLines(12));
  const done = await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal);

  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: 12, completed: 12, failed: 0 });
  expect(counter.maxInFlight()).toBe(1);
  expect(upstream.requests).toHaveLength(12);
  // One at a time, the i-th line ran on 1 USD less i lines of 15,000 µ$: its cap is that
  // balance less its input estimate (its bytes + 8 + 8), at 1,000 µ$ a token.
  upstream.requests.forEach((r, i) => {
    const input = Buffer.byteLength(r.body.messages[0].content) + 16;
    expect(r.body.max_tokens).toBe(1000 - 15 * i - input);
  });
  expect(await balanceOf(tenant.projectId)).toBe(1_000_000 - 12 * 15_000);
});
