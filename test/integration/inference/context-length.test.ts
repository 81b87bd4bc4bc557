/**
 * The context-length pre-check and token metering, with a small WordPiece tokenizer.json
 * installed in the model directories (every whitespace-separated word is one token), and
 * the byte estimate for a model without one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { tempDir } from '../../helpers/databases.js';
import { stream } from '../../helpers/fake-upstream.js';
import { rawPost, startInferenceEnv, usageOf, type InferenceEnv } from './setup.js';

let env: InferenceEnv;
const modelsRoot = tempDir('sluice-tokenizers-');

/** Lower-cases, splits on whitespace and punctuation; every unknown word is one [UNK] token. */
const TOKENIZER = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [{ id: 0, content: '[UNK]', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
  normalizer: { type: 'Lowercase' },
  pre_tokenizer: { type: 'Whitespace' },
  post_processor: null,
  decoder: null,
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: { '[UNK]': 0, word: 1 } },
};

function installTokenizer(id: string): string {
  const dir = path.join(modelsRoot, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(TOKENIZER));
  writeFileSync(path.join(dir, 'tokenizer_config.json'), '{}');
  return dir;
}

const words = (n: number) => Array.from({ length: n }, () => 'word').join(' ');

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: {
      'deberta-v3-small': { path: installTokenizer('deberta-v3-small') },
      'llama-3.1-8b-instruct-fast': { path: installTokenizer('llama'), context_length: 50 },
      'zlm-v1-moderation-edge': { path: installTokenizer('moderation'), context_length: 5 },
      't5-small': { path: installTokenizer('t5-small') },
      'gpt-oss-120b': { context_length: 10 },
    },
  });
});
afterAll(async () => env.close());
beforeEach(() => env.upstream.reset());

const post = (route: string, key: string, body: unknown) => call(env.server.baseUrl, 'POST', route, { key, body });

describe('pre-check', () => {
  it('refuses a classifier input one token over its 400-token limit, before any upstream call', async () => {
    const tenant = await env.server.newTenant();
    const over = await post('/v1/chat/completions', tenant.key, { model: 'deberta-v3-small', messages: [{ role: 'user', content: words(401) }] });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({
      error: {
        message: 'Input exceeds max_tokens (400) for model: deberta-v3-small (the input has 401 tokens)',
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        param: 'messages',
      },
    });
    expect(env.upstream.count()).toBe(0);
    expect(await usageOf(env.server, tenant.projectId)).toEqual([]);

    env.upstream.chat({ content: '{"a":1}' });
    const fits = await post('/v1/chat/completions', tenant.key, { model: 'deberta-v3-small', messages: [{ role: 'user', content: words(400) }] });
    expect(fits.status).toBe(200);
  });

  it('counts a chat conversation across its messages (context_length from the config)', async () => {
    const tenant = await env.server.newTenant();
    const messages = [
      { role: 'system', content: words(20) },
      { role: 'user', content: words(31) },
    ];
    const over = await post('/v1/chat/completions', tenant.key, { model: 'llama-3.1-8b-instruct-fast', messages });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toBe('Input exceeds max_tokens (50) for model: llama-3.1-8b-instruct-fast (the input has 51 tokens)');
    expect(over.body.error.param).toBe('messages');
    messages[1]!.content = words(30);
    expect((await post('/v1/chat/completions', tenant.key, { model: 'llama-3.1-8b-instruct-fast', messages })).status).toBe(200);
  });

  it('uses the byte estimate, and says so, for a model without a tokenizer', async () => {
    const tenant = await env.server.newTenant();
    const over = await post('/v1/chat/completions', tenant.key, { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'x'.repeat(41) }] });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toBe('Input exceeds max_tokens (10) for model: gpt-oss-120b (the input has about 11 tokens)');
    const fits = await post('/v1/chat/completions', tenant.key, { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'x'.repeat(40) }] });
    expect(fits.status).toBe(200);
  });

  it('lets a truncating model take any length', async () => {
    const tenant = await env.server.newTenant();
    env.upstream.chat({ content: 'short.' });
    const res = await post('/v1/chat/completions', tenant.key, { model: 't5-small', messages: [{ role: 'user', content: words(700) }] });
    expect(res.status).toBe(200);
  });

  it('names the offending moderation input', async () => {
    const tenant = await env.server.newTenant();
    const res = await post('/v1/moderations', tenant.key, { input: ['one two', 'a b c d e f'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'input[1]' });
    expect(res.body.error.message).toBe('Input exceeds max_tokens (5) for model: zlm-v1-moderation-edge (the input has 6 tokens)');
  });
});

describe('responses truncation', () => {
  const input = [
    { role: 'user', content: words(30) },
    { role: 'assistant', content: words(15) },
    { role: 'user', content: words(10) },
  ];

  it('drops the oldest turns with truncation "auto"', async () => {
    const tenant = await env.server.newTenant();
    const res = await post('/v1/responses', tenant.key, { model: 'llama-3.1-8b-instruct-fast', input, instructions: 'Be kind.' });
    expect(res.status).toBe(200);
    expect(res.body.truncation).toBe('auto');
    expect(env.upstream.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'assistant', content: words(15) },
      { role: 'user', content: words(10) },
    ]);
  });

  it('refuses with truncation "disabled"', async () => {
    const tenant = await env.server.newTenant();
    const res = await post('/v1/responses', tenant.key, { model: 'llama-3.1-8b-instruct-fast', input, truncation: 'disabled' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    expect(env.upstream.count()).toBe(0);
  });
});

describe('metering with the tokenizer', () => {
  it("counts a stream's tokens with the model's tokenizer when the upstream reports none", async () => {
    env.upstream.enqueue('/chat/completions', stream(['Three ', 'little ', 'words, really.'], { usage: null }));
    const tenant = await env.server.newTenant();
    const client = rawPost(env.server.baseUrl, '/v1/chat/completions', tenant.key, {
      model: 'llama-3.1-8b-instruct-fast',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count these four words' }],
    });
    let text = '';
    for await (const chunk of client.chunks()) text += chunk.text;
    const usage = JSON.parse(text.split('\n\n').filter(Boolean).at(-2)!.slice(6)).usage;
    // "Three little words, really." → three, little, words, ",", really, "." = 6 tokens.
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 });
    const [record] = await usageOf(env.server, tenant.projectId);
    expect(record).toMatchObject({ inputTokens: 4, outputTokens: 6 });
  });
});
