/**
 * Holds never refuse work the balance can pay for (src/domain/billing/credit-fit.ts): a
 * call that set no output cap and whose worst case and default allowance do not fit runs
 * with the largest cap the free credit affords, announced in `x-sluice-output-cap-lowered`;
 * an explicit cap the credit cannot cover is refused with the figures;
 * `BILLING_LOWER_OUTPUT_CAP=false` refuses instead of lowering.
 *
 * Figures: 1,000 USD per million tokens each way is 1,000 µ$ a token. "Hello" is
 * estimated at 5 bytes + 8 framing + 8 for the conversation's template = 21 input tokens
 * (21,000 µ$); the model's default output cap is 4,096 tokens, so the worst case is
 * 4,117,000 µ$, and the default allowance of 1,024 tokens 1,045,000 µ$. On 0.28 USD the
 * free credit affords (280,000 − 21,000) / 1,000 = 259 output tokens.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { handler } from '../../helpers/fake-upstream.js';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { balanceOf, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

const MODEL = 'llama-3.1-8b-instruct-fast';
const PRICED = { [MODEL]: { price: { input_per_million_usd: 1000, output_per_million_usd: 1000 } } };
const hello = { model: MODEL, messages: [{ role: 'user', content: 'Hello' }] };
const PROMPT_TOKENS = 11;

/**
 * An upstream that honours max_tokens, as a real one does: it would write `words` tokens,
 * stops at the cap with finish_reason "length", and reports what it wrote.
 */
function cappedUpstream(upstream: FakeUpstream, words: number, honoursCap = true): void {
  upstream.setDefault(
    '/chat/completions',
    handler((req, res) => {
      const cap = honoursCap && typeof req.body?.max_tokens === 'number' ? req.body.max_tokens : Infinity;
      const written = Math.min(words, cap);
      const body = {
        id: 'chatcmpl-capped',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: String(req.body?.model),
        choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(written).trim() }, finish_reason: written < words ? 'length' : 'stop' }],
        usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: written, total_tokens: PROMPT_TOKENS + written },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    }),
  );
}

const quotaError = (message: string) => ({ error: { message, type: 'insufficient_quota', code: 'insufficient_quota', param: null } });

describe('lowering the output cap (the default)', () => {
  let env: InferenceEnv;
  beforeAll(async () => {
    env = await startInferenceEnv({ extra: PRICED });
  });
  afterAll(async () => env.close());
  beforeEach(() => env.upstream.reset());

  const chat = (key: string, body: unknown = hello) => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body });

  it('serves a call without max_tokens on 0.28 USD with the cap the credit affords, ending with finish_reason "length" at it', async () => {
    cappedUpstream(env.upstream, 1000);
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const res = await chat(tenant.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-sluice-output-cap-lowered')).toBe('259');
    expect(env.upstream.requests[0]!.body.max_tokens).toBe(259);
    expect(res.body.choices[0].finish_reason).toBe('length');
    expect(res.body.usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: 259 });
    // (11 + 259) tokens at 1,000 µ$: 270,000 µ$ of the 280,000.
    expect(await balanceOf(env.server, tenant.projectId)).toBe(10_000);
  });

  it('a short answer costs only its tokens, and a call whose worst case fits is not lowered', async () => {
    cappedUpstream(env.upstream, 7);
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const lowered = await chat(tenant.key);
    expect(lowered.status).toBe(200);
    expect(lowered.body.choices[0].finish_reason).toBe('stop');
    expect(await balanceOf(env.server, tenant.projectId)).toBe(280_000 - 18_000);
    const rich = await env.server.newTenant({ balanceUsd: 5 });
    const plain = await chat(rich.key);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-sluice-output-cap-lowered')).toBeNull();
    expect(env.upstream.requests[1]!.body.max_tokens).toBeUndefined();
  });

  it('streams with the lowered cap too, and lets browsers read the header', async () => {
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const res = await fetch(`${env.server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.key, 'content-type': 'application/json', origin: 'https://app.example' },
      body: JSON.stringify({ ...hello, stream: true }),
    });
    expect(res.status).toBe(200);
    // Known at admission, before the stream starts: a header, not a trailer.
    expect(res.headers.get('x-sluice-output-cap-lowered')).toBe('259');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-sluice-output-cap-lowered');
    const text = await res.text();
    expect(text).toContain('data: [DONE]');
    expect(env.upstream.requests[0]!.body.max_tokens).toBe(259);
  });

  it('answers /v1/responses with the lowered max_output_tokens, incomplete when the answer reaches it', async () => {
    cappedUpstream(env.upstream, 1000);
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    // The input "Hello" is one message: the same 21-token estimate as the chat call.
    const res = await call(env.server.baseUrl, 'POST', '/v1/responses', { key: tenant.key, body: { model: MODEL, input: 'Hello' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-sluice-output-cap-lowered')).toBe('259');
    expect(env.upstream.requests[0]!.body.max_tokens).toBe(259);
    expect(res.body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 259 });
  });

  it('refuses an explicit cap the credit cannot cover, naming the worst case, the free balance and the cap it affords', async () => {
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const res = await chat(tenant.key, { ...hello, max_tokens: 1000 });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(
      quotaError(
        'Insufficient credit: this request may cost up to 1.021000 USD (21 input tokens at most, an output cap of 1000 tokens), ' +
          'and the free balance (the balance less the credit held by calls in flight) is 0.280000 USD, ' +
          'which affords an output cap of at most 259 tokens. Lower the output cap, or add credit.',
      ),
    );
    expect(env.upstream.count('/chat/completions')).toBe(0);
    // The cap it names is served.
    cappedUpstream(env.upstream, 1000);
    expect((await chat(tenant.key, { ...hello, max_tokens: 259 })).status).toBe(200);
    expect(await balanceOf(env.server, tenant.projectId)).toBe(10_000);
  });

  it('refuses only a call the balance cannot pay its input and one output token for, naming both; with nothing else held, one token is enough', async () => {
    const tenant = await env.server.newTenant({ balanceUsd: 0.021 }); // 21,000 + 1,000 > 21,000
    const res = await chat(tenant.key);
    expect(res.status).toBe(429);
    expect(res.body).toEqual(
      quotaError(
        'Insufficient credit: this request needs at least 0.022000 USD (21 input tokens at most and one output token), ' +
          'and the balance is 0.021000 USD. Add credit.',
      ),
    );
    expect(env.upstream.count('/chat/completions')).toBe(0);
    const enough = await env.server.newTenant({ balanceUsd: 0.022 });
    const served = await chat(enough.key);
    expect(served.status).toBe(200);
    expect(served.headers.get('x-sluice-output-cap-lowered')).toBe('1');
    // Below billing.min_output_tokens (16), which binds only beside other calls' holds.
    const fifteen = await env.server.newTenant({ balanceUsd: 0.036 });
    const small = await chat(fifteen.key);
    expect(small.status).toBe(200);
    expect(small.headers.get('x-sluice-output-cap-lowered')).toBe('15');
  });

  it('a 200-call burst on 0.28 USD serves calls and never overdraws: the debits are exactly the usage', async () => {
    // Answers of 7 tokens (18,000 µ$): the first call may hold all the credit, the rest are served as holds come back.
    cappedUpstream(env.upstream, 7);
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const answers = await Promise.all(Array.from({ length: 200 }, () => chat(tenant.key)));
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length + refused.length).toBe(200);
    for (const r of refused) expect(r.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    const records = await usageOf(env.server, tenant.projectId);
    expect(records).toHaveLength(served.length);
    const final = await balanceOf(env.server, tenant.projectId);
    expect(final).toBeGreaterThanOrEqual(0);
    expect(280_000 - final).toBe(records.reduce((sum, r) => sum + r.costMicros, 0));
  });
});

describe('the guarantee when an answer costs more than its estimate', () => {
  let env: InferenceEnv;
  beforeAll(async () => {
    env = await startInferenceEnv({ extra: PRICED });
  });
  afterAll(async () => env.close());

  it('concurrent calls overdraw only by what the served calls cost beyond their own holds', async () => {
    // An upstream that ignores max_tokens and always writes 400 tokens: (11 + 400) × 1,000 µ$ = 411,000 µ$.
    cappedUpstream(env.upstream, 400, false);
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello })),
    );
    const served = answers.filter((a) => a.status === 200).length;
    expect(served).toBeGreaterThanOrEqual(1);
    expect(env.upstream.requests).toHaveLength(served);
    // Each served call held its input estimate (21 tokens) and the cap it was sent with.
    const excess = env.upstream.requests.reduce((sum, r) => sum + 411_000 - (21 + (r.body.max_tokens as number)) * 1000, 0);
    const records = await usageOf(env.server, tenant.projectId);
    const final = await balanceOf(env.server, tenant.projectId);
    expect(280_000 - final).toBe(records.reduce((sum, r) => sum + r.costMicros, 0));
    expect(final).toBeLessThan(0);
    expect(final).toBeGreaterThanOrEqual(-excess);
  });
});

describe('billing.lower_output_cap: false (BILLING_LOWER_OUTPUT_CAP=false)', () => {
  let env: InferenceEnv;
  beforeAll(async () => {
    env = await startInferenceEnv({ extra: PRICED, env: { BILLING_LOWER_OUTPUT_CAP: 'false' } });
  });
  afterAll(async () => env.close());

  it('refuses a call without max_tokens whose worst case does not fit, naming the cap the credit affords', async () => {
    const tenant = await env.server.newTenant({ balanceUsd: 0.28 });
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello });
    expect(res.status).toBe(429);
    expect(res.body).toEqual(
      quotaError(
        'Insufficient credit: this request may cost up to 4.117000 USD (21 input tokens at most, an output cap of 4096 tokens), ' +
          'and the free balance (the balance less the credit held by calls in flight) is 0.280000 USD, ' +
          'which affords an output cap of at most 259 tokens. Lower the output cap, or add credit.',
      ),
    );
    expect(env.upstream.count('/chat/completions')).toBe(0);
  });
});
