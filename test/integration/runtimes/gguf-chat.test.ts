/**
 * The gguf backend with node-llama-cpp's prebuilt CPU binary on generated tiny llama
 * GGUF files: the model's own chat template, greedy and length-limited generation,
 * streaming, reasoning kept apart from the answer, and the HTTP chat/responses routes.
 * The runtime is the one SLUICE_RUNTIMES_DIR holds (test/helpers/gguf-runtime.ts).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';

let server: TestServer;
let modelsDir: string;
let key: string;

beforeAll(async () => {
  if (!GGUF_RUNTIMES_DIR) return;
  modelsDir = buildTestModels(['LFM2.5-1.2B-Instruct', 'LFM2.5-1.2B-Thinking']);
  server = await startTestServer({ env: { MODELS_DIR: modelsDir, ...GGUF_RUNTIME_ENV } });
  ({ key } = await server.newTenant({ balanceUsd: 5 }));
});

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  call(server.baseUrl, 'POST', '/v1/chat/completions', {
    key,
    body: { model, messages: [{ role: 'user', content: 'hello the world' }], temperature: 0, ...extra },
  });

async function streamEvents(model: string): Promise<any[]> {
  const res = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], temperature: 0, stream: true, stream_options: { include_usage: true } }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    .split('\n\n')
    .map((block) => block.replace(/^data: /, '').trim())
    .filter((data) => data && data !== '[DONE]')
    .map((data) => JSON.parse(data));
}

// The fixture's vocabulary is SentencePiece-style: words carry their leading space (▁hello).
describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF chat (LFM2.5-1.2B-Instruct slot)', () => {
  it('answers through the model chat template and stops at the end-of-turn token', async () => {
    const res = await chat('LFM2.5-1.2B-Instruct');
    expect(res.status).toBe(200);
    const choice = res.body.choices[0];
    expect(choice.message.content).toBe(' hello world');
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.reasoning).toBeUndefined();
    expect(res.body.usage.prompt_tokens).toBeGreaterThan(10);
    expect(res.body.usage.completion_tokens).toBe(2); // the end-of-turn token is not an output token
  });

  it('stops at max_tokens with finish_reason length', async () => {
    const res = await chat('LFM2.5-1.2B-Instruct', { max_tokens: 1 });
    expect(res.body.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: ' hello' } });
    expect(res.body.usage.completion_tokens).toBe(1);
  });

  it('honours stop sequences', async () => {
    const res = await chat('LFM2.5-1.2B-Instruct', { stop: [' world'] });
    expect(res.body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: ' hello' } });
  });

  it('streams deltas that add up to the answer', async () => {
    const events = await streamEvents('LFM2.5-1.2B-Instruct');
    const text = events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('');
    expect(text).toBe(' hello world');
    expect(events.some((e) => e.choices?.[0]?.finish_reason === 'stop')).toBe(true);
    expect(events.at(-1).usage.completion_tokens).toBe(2);
  });

  it('serves the responses route', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: 'LFM2.5-1.2B-Instruct', input: 'hello', temperature: 0 } });
    expect(res.status).toBe(200);
    const message = res.body.output.find((o: any) => o.type === 'message');
    expect(message.content[0].text).toBe(' hello world');
  });
});

describe.skipIf(!GGUF_RUNTIMES_DIR)('GGUF thinking model (LFM2.5-1.2B-Thinking slot)', () => {
  it('keeps the reasoning apart from the answer', async () => {
    const res = await chat('LFM2.5-1.2B-Thinking');
    expect(res.status).toBe(200);
    const message = res.body.choices[0].message;
    expect(message.content).toBe('answer is a');
    expect(message.reasoning.trim()).toBe('the model thinks');
    expect(res.body.usage.completion_tokens_details?.reasoning_tokens ?? 0).toBeGreaterThan(0);
  });

  it('with tools the model may call (tool_choice auto), the reasoning stays apart from the answer', async () => {
    const time = { type: 'function', function: { name: 'time', parameters: { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } } } } };
    const res = await chat('LFM2.5-1.2B-Thinking', { tools: [time] });
    expect(res.status).toBe(200);
    const message = res.body.choices[0].message;
    expect(message.content).toBe('answer is a');
    expect(message.reasoning.trim()).toBe('the model thinks');
    expect(res.body.usage.completion_tokens_details?.reasoning_tokens ?? 0).toBeGreaterThan(0);
  });

  it('streams reasoning deltas separately from content deltas', async () => {
    const events = await streamEvents('LFM2.5-1.2B-Thinking');
    const deltas = events.map((e) => e.choices?.[0]?.delta ?? {});
    const reasoning = deltas.map((d) => d.reasoning ?? '').join('');
    const content = deltas.map((d) => d.content ?? '').join('');
    expect(reasoning.trim()).toBe('the model thinks');
    expect(content).toBe('answer is a');
    expect(content).not.toContain('<think>');
  });
});
