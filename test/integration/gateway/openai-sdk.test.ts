/**
 * The official `openai` SDK against `/gateway/v1` through a loopback proxy that signs
 * each request, as an intermediary would: chat (JSON and streamed), responses and
 * embeddings, each settled with the intermediary for what `gw-usage` said.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSigningProxy, type SigningProxy } from './signing-proxy.js';
import { KID, SECRET, startGatewayEnv, type GatewayEnv } from './setup.js';

let env: GatewayEnv;
let proxy: SigningProxy;
let client: OpenAI;

beforeAll(async () => {
  env = await startGatewayEnv();
  proxy = await startSigningProxy(env.server.baseUrl, { kid: KID, secret: SECRET });
  client = new OpenAI({ baseURL: `${proxy.baseUrl}/gateway/v1`, apiKey: 'unused-by-the-gateway', maxRetries: 0 });
});
afterAll(async () => {
  await proxy.close();
  await env.close();
});
beforeEach(() => {
  env.upstream.reset();
  env.intermediary.reset();
  proxy.answers.length = 0;
});

/** The events the intermediary accepted for the request the proxy sent last. */
async function settledFor(meters: number) {
  const { requestId } = proxy.answers.at(-1)!;
  await env.intermediary.waitForAccepted(meters);
  return Object.fromEntries([...env.intermediary.accepted.values()].filter((e) => e.requestId === requestId).map((e) => [e.meter, e.quantity]));
}

describe('openai SDK through a signing proxy', () => {
  it('chat.completions.create: the gateway answer (annotations, usage details) and gw-usage, settled', async () => {
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    expect(completion.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(completion.choices[0]!.message.annotations).toEqual([]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } });
    expect(completion.usage!.completion_tokens_details).toBeTypeOf('object');
    expect(response.headers.get('gw-usage')).toBe('input_tokens=11, output_tokens=7');
    expect(response.headers.get('gw-request-id')).toBe(proxy.answers[0]!.requestId);
    expect(await settledFor(2)).toEqual({ input_tokens: 11, output_tokens: 7 });
  });

  it('chat.completions.create with stream: true: text, usage chunk, and the stream settled', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-oss-120b',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from the fake upstream.');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(await settledFor(2)).toEqual({ input_tokens: 11, output_tokens: 7 });
  });

  it('responses.create: the full Responses object, settled', async () => {
    const { data: response, response: raw } = await client.responses
      .create({ model: 'gpt-oss-120b', input: 'Hello', instructions: 'Be brief' })
      .withResponse();
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.error).toBeNull();
    expect(response.output_text).toBe('Hello from the fake upstream.');
    expect(response.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, input_tokens_details: { cached_tokens: 0 } });
    expect(raw.headers.get('gw-usage')).toBe('input_tokens=11, output_tokens=7');
    expect(await settledFor(2)).toEqual({ input_tokens: 11, output_tokens: 7 });
  });

  it('embeddings.create: one vector per input, input tokens settled', async () => {
    const { data: list, response } = await client.embeddings.create({ model: 'all-minilm-l6-v2', input: ['one', 'two'] }).withResponse();
    expect(list.data).toHaveLength(2);
    expect(list.data[1]!.index).toBe(1);
    expect(response.headers.get('gw-usage')).toBe(`input_tokens=${list.usage.prompt_tokens}`);
    expect(await settledFor(1)).toEqual({ input_tokens: list.usage.prompt_tokens });
  });

  it('the SDK sees a refused allowance as a 402 with the intermediary body', async () => {
    env.intermediary.check(proxy.agentId, { kind: 'deny', reason: 'spend_cap_reached' });
    const error = await client.chat.completions.create({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    // The SDK keeps the body's `error` member: here the intermediary's code.
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toBe('payment_required');
    expect(proxy.answers[0]!.status).toBe(402);
    expect(env.upstream.count('/chat/completions')).toBe(0);
  });
});
