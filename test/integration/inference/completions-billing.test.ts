/**
 * POST /v1/completions bills exactly as chat does: an engine that reports no usage is
 * billed the counted tokens (streamed or not), a stream the engine cuts after its first
 * event is billed for what was delivered with status 502, and one the client leaves with
 * status 499. The balance is debited by the recorded cost.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { stream } from '../../helpers/fake-upstream.js';
import { balanceOf, rawPost, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const MODEL = 'gpt-oss-120b';
const body = (extra: Record<string, unknown> = {}) => ({ model: MODEL, prompt: 'Say hello', ...extra });

/** A legacy completion's stream chunk carrying `text`. */
const textChunk = (text: string) => ({ object: 'text_completion', choices: [{ index: 0, text, logprobs: null, finish_reason: null }] });

/** `data:` payloads of an SSE body, JSON-parsed except `[DONE]` (an error event's `event: error` line dropped). */
function events(text: string): any[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const data = block.replace(/^event: error\n/, '').slice('data: '.length);
      return data === '[DONE]' ? '[DONE]' : JSON.parse(data);
    });
}

async function readAll(client: ReturnType<typeof rawPost>): Promise<string> {
  let text = '';
  for await (const chunk of client.chunks()) text += chunk.text;
  return text;
}

async function oneRecord(projectId: string) {
  const until = Date.now() + 3000;
  for (;;) {
    const records = await usageOf(env.server, projectId);
    if (records.length > 0) {
      expect(records).toHaveLength(1);
      return records[0]!;
    }
    if (Date.now() > until) throw new Error('timed out waiting for the usage record');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('an engine that reports no usage', () => {
  // No tokenizer for this upstream model: ⌈bytes / 4⌉ — "Say hello" (9 bytes) → 3 in; the 29-byte answer → 8 out.
  // 3 × 0.15 + 8 × 0.60 = 5.25 µ$, rounded up → 6.
  it('is billed the counted tokens, not streamed', async () => {
    env.upstream.chat({ usage: null });
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const res = await call(env.server.baseUrl, 'POST', '/v1/completions', { key: tenant.key, body: body() });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].text).toBe('Hello from the fake upstream.');
    expect(res.body.usage).toEqual({ prompt_tokens: 3, completion_tokens: 8, total_tokens: 11 });
    const record = await oneRecord(tenant.projectId);
    expect(record).toMatchObject({ route: '/v1/completions', model: MODEL, inputTokens: 3, outputTokens: 8, costMicros: 6, status: 200 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 6);
  });

  it('is billed the counted tokens, streamed, and the final usage chunk says so', async () => {
    env.upstream.chat({ usage: null });
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const client = rawPost(env.server.baseUrl, '/v1/completions', tenant.key, body({ stream: true, stream_options: { include_usage: true } }));
    const all = events(await readAll(client));
    expect(all.at(-1)).toBe('[DONE]');
    expect(all.at(-2)).toMatchObject({ object: 'text_completion', choices: [], usage: { prompt_tokens: 3, completion_tokens: 8, total_tokens: 11 } });
    const record = await oneRecord(tenant.projectId);
    expect(record).toMatchObject({ route: '/v1/completions', inputTokens: 3, outputTokens: 8, costMicros: 6, status: 200 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 6);
  });
});

describe('a stream that ends early', () => {
  it('cut by the engine after its first event: an error event, and what was delivered is billed with status 502', async () => {
    env.upstream.enqueue('/completions', stream([textChunk('one '), textChunk('two '), textChunk('three')], { closeAfter: 2, delayMs: 20 }));
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const client = rawPost(env.server.baseUrl, '/v1/completions', tenant.key, body({ stream: true }));
    const all = events(await readAll(client));
    expect(all.slice(0, 2).map((e) => e.choices[0].text)).toEqual(['one ', 'two ']);
    expect(all[2]).toEqual({
      error: {
        message: 'Upstream for model gpt-oss-120b is unreachable or closed the connection (UND_ERR_SOCKET)',
        type: 'internal_error',
        code: 'upstream_error',
        param: null,
      },
    });
    expect(all).toHaveLength(3);
    const record = await oneRecord(tenant.projectId);
    // "Say hello" → 3 tokens in; "one two " (8 bytes) → 2 tokens out: 3 × 0.15 + 2 × 0.60 = 1.65 µ$ → 2.
    expect(record).toMatchObject({ route: '/v1/completions', model: MODEL, inputTokens: 3, outputTokens: 2, costMicros: 2, status: 502 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 2);
  });

  it('left by the client: the engine is stopped and what was delivered is billed with status 499', async () => {
    env.upstream.enqueue('/completions', stream([textChunk('alpha '), textChunk('beta '), textChunk('gamma ')], { delayMs: 300 }));
    const tenant = await env.server.newTenant();
    const before = await balanceOf(env.server, tenant.projectId);
    const client = rawPost(env.server.baseUrl, '/v1/completions', tenant.key, body({ stream: true }));
    for await (const chunk of client.chunks()) {
      expect(chunk.text).toContain('"alpha "');
      break;
    }
    client.disconnect();
    const [aborted] = await env.upstream.waitForAborted(1);
    expect(aborted!.completed).toBe(false);
    const record = await oneRecord(tenant.projectId);
    // "Say hello" → 3 tokens in; "alpha " (6 bytes) → 2 tokens out.
    expect(record).toMatchObject({ route: '/v1/completions', inputTokens: 3, outputTokens: 2, costMicros: 2, status: 499 });
    expect(await balanceOf(env.server, tenant.projectId)).toBe(before - 2);
  });
});
