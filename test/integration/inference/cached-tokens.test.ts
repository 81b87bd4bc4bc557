/**
 * Cached input tokens, through the `openai` SDK against a fake engine that reports
 * prompt-cache hits (`usage.prompt_tokens_details.cached_tokens`, as vLLM and SGLang do):
 * each answer reports them in its wire's own field, the usage record keeps them apart, and
 * the balance is debited at the model's cached-input price for them, to the micro-dollar.
 * A model that sets no cached-input price bills them at its input price, never free.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call } from '../../helpers/harness.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

/** $2/M input, $0.50/M cached input, $3/M cache writes, $4/M output: USD per million tokens is micro-dollars per token (a chat and Responses model). */
const PRICED = 'gpt-oss-120b';
/** $2/M input, $4/M output, and no cached-input price. */
const UNPRICED = 'llama-3.1-8b-instruct-fast';
const USAGE = { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 800 };
/** 200 uncached × 2 + 800 cached × 0.5 + 100 out × 4. */
const PRICED_COST = 400 + 400 + 400;
/** Every input token at the input price: 1000 × 2 + 100 × 4. */
const UNPRICED_COST = 2000 + 400;
const BALANCE_MICROS = 1_000_000;

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: {
      [PRICED]: { upstream_model: 'openai/gpt-oss-120b', price: { input_per_million_usd: 2, output_per_million_usd: 4, cached_input_per_million_usd: 0.5, cache_write_per_million_usd: 3 } },
      [UNPRICED]: { price: { input_per_million_usd: 2, output_per_million_usd: 4 } },
    },
  });
});
afterAll(async () => env.close());
beforeEach(() => {
  env.upstream.reset();
  env.upstream.chat({ content: 'From the cache', usage: USAGE });
});

async function tenant() {
  const t = await env.server.newTenant({ balanceUsd: BALANCE_MICROS / 1e6 });
  return { ...t, client: new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: t.key, maxRetries: 0 }) };
}

/** The one usage record of the project, and what its balance lost. */
async function billed(projectId: string) {
  const records = await usageOf(env.server, projectId);
  expect(records).toHaveLength(1);
  return { record: records[0]!, debited: BALANCE_MICROS - (await balanceOf(env.server, projectId)) };
}

describe('cached input tokens', () => {
  it('chat completions: reported in usage.prompt_tokens_details.cached_tokens and billed at the cached-input price', async () => {
    const { client, projectId } = await tenant();
    const answer = await client.chat.completions.create({ model: PRICED, messages: [{ role: 'user', content: 'Hello again' }] });
    expect(answer.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, prompt_tokens_details: { cached_tokens: 800 } });
    const { record, debited } = await billed(projectId);
    expect(record).toMatchObject({ model: PRICED, inputTokens: 1000, cachedInputTokens: 800, outputTokens: 100, costMicros: PRICED_COST });
    expect(record.cacheWriteTokens).toBeUndefined();
    expect(debited).toBe(PRICED_COST);
  });

  it('a streamed chat reports them in its usage chunk and is billed the same', async () => {
    const { client, projectId } = await tenant();
    const stream = await client.chat.completions.create({
      model: PRICED,
      messages: [{ role: 'user', content: 'Hello again' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage?.prompt_tokens_details?.cached_tokens).toBe(800);
    const { record, debited } = await billed(projectId);
    expect(record).toMatchObject({ inputTokens: 1000, cachedInputTokens: 800, costMicros: PRICED_COST });
    expect(debited).toBe(PRICED_COST);
  });

  it('responses: reported in usage.input_tokens_details.cached_tokens and billed at the cached-input price', async () => {
    const { client, projectId } = await tenant();
    const response = await client.responses.create({ model: PRICED, input: 'Hello again', store: false });
    expect(response.usage).toMatchObject({ input_tokens: 1000, output_tokens: 100, input_tokens_details: { cached_tokens: 800 } });
    const { record, debited } = await billed(projectId);
    expect(record).toMatchObject({ route: '/v1/responses', inputTokens: 1000, cachedInputTokens: 800, costMicros: PRICED_COST });
    expect(debited).toBe(PRICED_COST);
  });

  it('a model without a cached-input price bills cached tokens at its input price, and still reports them', async () => {
    const { client, projectId } = await tenant();
    const answer = await client.chat.completions.create({ model: UNPRICED, messages: [{ role: 'user', content: 'Hello again' }] });
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(800);
    const { record, debited } = await billed(projectId);
    expect(record).toMatchObject({ inputTokens: 1000, cachedInputTokens: 800, costMicros: UNPRICED_COST });
    expect(debited).toBe(UNPRICED_COST);
  });

  it('an engine that reports no cached tokens is billed and reported as before', async () => {
    env.upstream.chat({ content: 'Cold', usage: { prompt_tokens: 1000, completion_tokens: 100 } });
    const { client, projectId } = await tenant();
    const answer = await client.chat.completions.create({ model: PRICED, messages: [{ role: 'user', content: 'Hello' }] });
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const { record, debited } = await billed(projectId);
    expect(record.cachedInputTokens).toBeUndefined();
    expect(debited).toBe(2000 + 400);
  });

  it('the usage report sums them apart (admin API)', async () => {
    const { client, projectId } = await tenant();
    await client.chat.completions.create({ model: PRICED, messages: [{ role: 'user', content: 'Hello again' }] });
    await client.chat.completions.create({ model: UNPRICED, messages: [{ role: 'user', content: 'Hello again' }] });
    const res = await call(env.server.baseUrl, 'GET', `/admin/v1/usage?project_id=${projectId}&group_by=model`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    const results = (res.body.data as Array<{ results: Array<Record<string, unknown>> }>).flatMap((b) => b.results);
    const byModel = Object.fromEntries(results.map((r) => [r.group, r]));
    expect(byModel[PRICED]).toMatchObject({ requests: 1, input_tokens: 1000, input_cached_tokens: 800, input_cache_write_tokens: 0, output_tokens: 100, cost_usd: PRICED_COST / 1e6 });
    expect(byModel[UNPRICED]).toMatchObject({ requests: 1, input_tokens: 1000, input_cached_tokens: 800, cost_usd: UNPRICED_COST / 1e6 });
  });
});
