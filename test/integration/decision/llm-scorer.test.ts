/**
 * The `llm` zero-shot scorer (decision.scorers, decision.llm_model) end to end:
 * - over a fake OpenAI-compatible upstream on loopback that answers chosen top_logprobs:
 *   the exact answers (renormalisation, missing options, confidence), the request the
 *   upstream received (one token, greedy, logprobs, the lettered prompt), label-mapped
 *   questions still on the pack, and 502 `upstream_error` when the upstream fails, times
 *   out, sends no logprobs or refuses the connection;
 * - on a generated GGUF model in process: probabilities over the options sum to 1, equal
 *   the next-token probabilities of the letters renormalised, are bit for bit the same on
 *   every call however much else runs beside it, and follow the model (one scripted to
 *   answer "B" picks the second option).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { fail, handler, json, stall, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { buildTinyLlama } from '../../fixtures/model-builders/gguf-llama.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';
import { refusedPort } from '../../helpers/refused-port.js';
import { findLabel } from '../../../src/domain/shared/classification/label-sets.js';
import type { OnnxBackend } from '../../../src/inference/backends/onnx/index.js';
import { decisionPrompt } from '../../../src/inference/decision/llm-scores.js';

const IAB = 'zlm-v1-iab-classify-edge';
const STATE = 'The invoice was charged twice and the customer wants a refund.';

/** A chat completion whose one token has these alternatives (probabilities, as logprobs). */
function logprobsAnswer(top: Record<string, number>) {
  const entries = Object.entries(top).map(([token, p]) => ({ token, logprob: Math.log(p), bytes: null }));
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-chat',
    choices: [{ index: 0, message: { role: 'assistant', content: entries[0]!.token }, logprobs: { content: [{ ...entries[0]!, top_logprobs: entries }] }, finish_reason: 'length' }],
    usage: { prompt_tokens: 40, completion_tokens: 1, total_tokens: 41 },
  };
}

const ERROR_BODY = (message: RegExp) => ({ error: { message: expect.stringMatching(message), type: 'internal_error', code: 'upstream_error', param: null } });

describe('the llm scorer over an OpenAI-compatible upstream', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let modelsDir: string;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    modelsDir = buildTestModels(['all-minilm-l6-v2']);
    const yaml =
      `decision:\n  scorers:\n    ${IAB}: llm\n  llm_model: gpt-oss-120b\n` +
      `models:\n  gpt-oss-120b:\n    backend: openai\n    base_url: ${upstream.baseUrl}\n    upstream_model: upstream-chat\n    timeout_ms: 1500\n`;
    server = await startTestServer({ env: { MODELS_DIR: modelsDir, ...GGUF_RUNTIME_ENV }, yaml });
    ({ key } = await server.newTenant({ balanceUsd: 5 }));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await upstream?.close();
    if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
  });

  const decide = (questions: unknown) => call(server.baseUrl, 'POST', '/v1/systemone', { key, body: { model: IAB, state: STATE, questions } });
  const one = { q: { type: 'noul', instructions: 'Is the customer angry?' } };

  it('reads choices, scores and nouls off the option letters; label-mapped questions stay on the pack', async () => {
    upstream.reset();
    // Questions arrive concurrently, in any order: answer by what the prompt asks.
    upstream.setDefault(
      '/chat/completions',
      handler((req, res) => {
        const prompt: string = req.body.messages[0].content;
        // dept: "C" is not among the alternatives; listed mass 0.9, so it gets min(0.1 / 1, 0.1).
        const top: Record<string, number> = prompt.includes('Which department?')
          ? { A: 0.6, ' B': 0.2, The: 0.1 }
          : prompt.includes('How urgent?')
            ? { C: 0.7, B: 0.2, A: 0.1 }
            : { A: 0.7, B: 0.25, b: 0.05 };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(logprobsAnswer(top)));
      }),
    );
    const res = await decide({
      dept: { type: 'choice', instructions: 'Which department?', criteria: { billing: 'payments and invoices', technical: null, other: null } },
      urgency: { type: 'score', instructions: 'How urgent?', criteria: ['low', 'mid', 'high'] },
      angry: { type: 'noul', instructions: 'Is the customer angry?' },
      topic: { type: 'choice', criteria: { Automotive: null, Sports: null } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { dept, urgency, angry, topic } = res.body.answers;
    expect(dept.choice).toBe('billing');
    expect(dept.probabilities.billing).toBeCloseTo(0.6 / 0.9, 12);
    expect(dept.probabilities.technical).toBeCloseTo(0.2 / 0.9, 12);
    expect(dept.probabilities.other).toBeCloseTo(0.1 / 0.9, 12);
    expect(dept.confidence).toBeCloseTo((3 * (0.6 / 0.9) - 1) / 2, 12);
    // score = 0·0.1 + 1·0.2 + 2·0.7; confidence = 1 − (0.1·2 + 0.2·1) / (2/3)
    expect(urgency.score).toBeCloseTo(1.6, 12);
    expect(urgency.confidence).toBeCloseTo(0.4, 12);
    expect(urgency.legend).toEqual({ 0: 'low', 1: 'mid', 2: 'high' });
    // noul: P(A) renormalised over A and B ("b" is not an option's letter)
    expect(angry.noul).toBeCloseTo(0.7 / 0.95, 12);
    expect(res.body.usage.output_tokens).toBe(0);
    expect(res.body.usage.total_tokens).toBe(res.body.usage.input_tokens);

    // Three questions went to the chat model; the label-mapped one read the pack.
    expect(upstream.count('/chat/completions')).toBe(3);
    const model = server.core.registry.find(IAB)!;
    const backend = (await server.core.registry.backendFor(model, 'runTask')) as OnnxBackend;
    const set = (await backend.scorePack(model, STATE)).sets.get('iab_content_2_2')!;
    const [a, s] = [set.probs[findLabel(set.set, 'Automotive')]!, set.probs[findLabel(set.set, 'Sports')]!];
    expect(topic.probabilities.Automotive).toBeCloseTo(a / (a + s), 6);

    const angryRequest = upstream.requests.find((r) => r.body.messages[0].content.includes('Is the customer angry?'))!;
    expect(angryRequest.body).toEqual({
      model: 'upstream-chat',
      messages: [
        { role: 'user', content: `Content:\n${STATE}\n\nQuestion: Is the customer angry?\n\nOptions:\nA. Yes\nB. No\n\nAnswer with the letter only.` },
      ],
      max_tokens: 1,
      temperature: 0,
      logprobs: true,
      top_logprobs: 20,
    });
    expect(angryRequest.headers['x-request-id']).toBe(res.headers.get('x-request-id'));
    const deptRequest = upstream.requests.find((r) => r.body.messages[0].content.includes('Which department?'))!;
    expect(deptRequest.body.messages[0].content).toContain('Options:\nA. billing: payments and invoices\nB. technical\nC. other\n');
  });

  it('brand safety reads the pack\'s Sensitive Topics label: the chat model is not asked', async () => {
    upstream.reset();
    upstream.setDefault('/chat/completions', fail(500, 'must not be called'));
    const res = await decide({ safe: { type: 'noul', instructions: 'Is this page brand safe?' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.answers.safe.noul).toBeGreaterThan(0);
    expect(res.body.answers.safe.noul).toBeLessThan(1);
    expect(upstream.count('/chat/completions')).toBe(0);
  });

  it('502 upstream_error when the upstream fails', async () => {
    upstream.reset();
    upstream.setDefault('/chat/completions', fail(500, 'engine crashed'));
    const res = await decide(one);
    expect(res.status).toBe(502);
    expect(res.body).toEqual(ERROR_BODY(/^The llm scorer's model gpt-oss-120b failed: Upstream error for model gpt-oss-120b \(status 500\): engine crashed$/));
  });

  it('502 upstream_error when the answer carries no logprobs (or an empty top list)', async () => {
    upstream.reset();
    const plain = { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'A' }, finish_reason: 'length' }] };
    upstream.setDefault('/chat/completions', json(plain));
    const res = await decide(one);
    expect(res.status).toBe(502);
    expect(res.body).toEqual(ERROR_BODY(/^The llm scorer's model gpt-oss-120b failed: .*the answer carries no logprobs/));

    upstream.setDefault('/chat/completions', json({ ...plain, choices: [{ ...plain.choices[0], logprobs: { content: [] } }] }));
    expect((await decide(one)).status).toBe(502);
  });

  it('502 upstream_error when the upstream does not answer in time', async () => {
    upstream.reset();
    upstream.setDefault('/chat/completions', stall());
    const res = await decide(one);
    expect(res.status).toBe(502);
    expect(res.body).toEqual(ERROR_BODY(/^The llm scorer's model gpt-oss-120b failed: Upstream for model gpt-oss-120b did not answer in time$/));
  });

  it('one failing question cancels the others still in flight', async () => {
    // Its own server: the default upstream timeout (10 minutes), so only the cancellation can end the stalled calls.
    const own = await startFakeUpstream();
    const yaml = `decision:\n  scorers:\n    ${IAB}: llm\n  llm_model: gpt-oss-120b\nmodels:\n  gpt-oss-120b:\n    base_url: ${own.baseUrl}\n`;
    const fresh = await startTestServer({ env: { MODELS_DIR: modelsDir }, yaml });
    try {
      own.setDefault(
        '/chat/completions',
        handler(async (req, res) => {
          if (!req.body.messages[0].content.includes('about the failing topic?')) return; // never answers
          await own.waitForRequests(11, '/chat/completions');
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'engine crashed' } }));
        }),
      );
      const tenant = await fresh.newTenant({ balanceUsd: 5 });
      // Names no IAB label has: every question goes to the chat model.
      const topics = ['the failing topic', ...Array.from({ length: 10 }, (_, i) => `the stalled topic ${i}`)];
      const questions = Object.fromEntries(topics.map((t, i) => [`q${i}`, { type: 'noul', instructions: `Is the content about ${t}?` }]));
      const body = { model: IAB, state: STATE, questions };
      const res = await call(fresh.baseUrl, 'POST', '/v1/systemone', { key: tenant.key, body });
      expect(res.status).toBe(502);
      expect(res.body).toEqual(ERROR_BODY(/engine crashed$/));
      expect(await own.waitForAborted(10)).toHaveLength(10);
    } finally {
      await fresh.close();
      await own.close();
    }
  });

  it('503 model_not_available when the chat model is not installed', async () => {
    const yaml = `decision:\n  scorers:\n    ${IAB}: llm\n  llm_model: LFM2.5-1.2B-Instruct\n`;
    const fresh = await startTestServer({ env: { MODELS_DIR: modelsDir }, yaml });
    try {
      const tenant = await fresh.newTenant({ balanceUsd: 5 });
      const res = await call(fresh.baseUrl, 'POST', '/v1/systemone', { key: tenant.key, body: { model: IAB, state: STATE, questions: one } });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_available', param: 'model' });
      expect(res.body.error.message).toMatch(/^Model LFM2\.5-1\.2B-Instruct is not available: no \.gguf file in its model directory; run `sluice models pull LFM2\.5-1\.2B-Instruct`$/);
    } finally {
      await fresh.close();
    }
  });

  it('502 upstream_error when the upstream refuses the connection', async () => {
    const port = await refusedPort();
    const yaml = `decision:\n  scorers:\n    ${IAB}: llm\n  llm_model: gpt-oss-120b\nmodels:\n  gpt-oss-120b:\n    base_url: http://127.0.0.1:${port}/v1\n`;
    const fresh = await startTestServer({ env: { MODELS_DIR: modelsDir }, yaml });
    try {
      const tenant = await fresh.newTenant({ balanceUsd: 5 });
      const res = await call(fresh.baseUrl, 'POST', '/v1/systemone', { key: tenant.key, body: { model: IAB, state: STATE, questions: one } });
      expect(res.status).toBe(502);
      expect(res.body).toEqual(ERROR_BODY(/^The llm scorer's model gpt-oss-120b failed: Upstream for model gpt-oss-120b is unreachable or closed the connection \(ECONNREFUSED\)$/));
    } finally {
      await fresh.close();
    }
  });
});

describe.skipIf(!GGUF_RUNTIMES_DIR)('the llm scorer on an in-process GGUF model', () => {
  let server: TestServer;
  let modelsDir: string;
  let key: string;
  const CHAT = 'LFM2.5-1.2B-Instruct';

  beforeAll(async () => {
    // No scripted tokens: the random weights give the letters small, uneven probabilities
    // (a scripted answer's logit is so high that every other token's probability underflows).
    modelsDir = buildTestModels(['all-minilm-l6-v2']);
    buildTinyLlama(path.join(modelsDir, CHAT, 'model-Q4_K_M.gguf'), { script: [], seed: 44 });
    // One llama.cpp thread: on a busy machine, threads that wait for each other by spinning
    // make even this tiny model slow, and the decision reads pin their thread count anyway.
    const yaml = `decision:\n  scorers:\n    ${IAB}: llm\n    zlm-v1-moderation-edge: llm\n  llm_model: ${CHAT}\nruntimes:\n  gguf_threads: 1\n`;
    server = await startTestServer({ env: { MODELS_DIR: modelsDir, ...GGUF_RUNTIME_ENV }, yaml });
    ({ key } = await server.newTenant({ balanceUsd: 5 }));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
  });

  const questions = {
    dept: { type: 'choice', instructions: 'Which department?', criteria: { billing: null, technical: null, other: null } },
    urgency: { type: 'score', criteria: ['low', 'mid', 'high', 'critical'] },
    angry: { type: 'noul', instructions: 'Is the customer angry?' },
  };
  const decide = () => call(server.baseUrl, 'POST', '/v1/systemone', { key, body: { model: IAB, state: STATE, questions } });
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

  it('answers from the probabilities of the option letters at the answer position', async () => {
    const res = await decide();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { dept, urgency, angry } = res.body.answers;
    expect(Object.keys(dept.probabilities)).toEqual(['billing', 'technical', 'other']);
    expect(sum(dept.probabilities)).toBeCloseTo(1, 12);
    expect(sum(urgency.probabilities)).toBeCloseTo(1, 12);
    expect(Object.keys(urgency.legend)).toEqual(['0', '1', '2', '3']);
    expect(urgency.score).toBeCloseTo([0, 1, 2, 3].reduce((sum, i) => sum + i * urgency.probabilities[String(i)], 0), 12);
    expect(angry.noul).toBeGreaterThan(0);
    expect(angry.noul).toBeLessThan(1);
    for (const p of Object.values(dept.probabilities) as number[]) expect(p).toBeGreaterThan(0.001);

    // The same numbers as the backend's own next-token read, renormalised.
    const chat = server.core.registry.find(CHAT)!;
    const backend = await server.core.registry.backendFor(chat, 'nextTokenLogprobs');
    const { messages, labels } = decisionPrompt(STATE, { type: 'choice', instructions: 'Which department?', options: ['billing', 'technical', 'other'] });
    const read = await backend.nextTokenLogprobs!({ model: chat, messages, candidates: labels, requestId: 'req_test', signal: new AbortController().signal });
    expect(read.logprobs.map((t) => t.token)).toEqual(['A', 'B', 'C']);
    const total = read.logprobs.reduce((sum, t) => sum + Math.exp(t.logprob), 0);
    expect(total).toBeLessThan(1); // the rest of the vocabulary has the remainder
    const expected = read.logprobs.map((t) => Math.exp(t.logprob) / total);
    expect(dept.probabilities.billing).toBeCloseTo(expected[0]!, 9);
    expect(dept.probabilities.technical).toBeCloseTo(expected[1]!, 9);
    expect(dept.probabilities.other).toBeCloseTo(expected[2]!, 9);
    expect(dept.choice).toBe(['billing', 'technical', 'other'][expected.indexOf(Math.max(...expected))]);
  });

  it('follows the model: one scripted to answer "B" picks the second option and says no', async () => {
    const dir = buildTestModels(['all-minilm-l6-v2']);
    // After the generation prompt's newline this model answers "B".
    buildTinyLlama(path.join(dir, CHAT, 'model-Q4_K_M.gguf'), { script: ['B', '<|im_end|>'], seed: 43 });
    const fresh = await startTestServer({ env: { MODELS_DIR: dir, ...GGUF_RUNTIME_ENV }, yaml: `decision:\n  scorers:\n    ${IAB}: llm\n  llm_model: ${CHAT}\n` });
    try {
      const tenant = await fresh.newTenant({ balanceUsd: 5 });
      const res = await call(fresh.baseUrl, 'POST', '/v1/systemone', { key: tenant.key, body: { model: IAB, state: STATE, questions } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.answers.dept.choice).toBe('technical');
      expect(res.body.answers.dept.probabilities.technical).toBeGreaterThan(0.99);
      expect(res.body.answers.urgency.probabilities['1']).toBeGreaterThan(0.99);
      expect(res.body.answers.angry.noul).toBeLessThan(0.01);
    } finally {
      await fresh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is deterministic under load: the same request 50 times, beside other decisions and chats on the same model, answers bit for bit the same', { timeout: 120_000 }, async () => {
    const alone = await decide();
    expect(alone.status, JSON.stringify(alone.body)).toBe(200);
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const otherDecision = (i: number) =>
      call(server.baseUrl, 'POST', '/v1/systemone', {
        key,
        body: { model: IAB, state: `${STATE} Order ${i} of ${'many '.repeat(i % 7)}items.`, questions: { [`q${i}`]: questions.dept } },
      });
    const chat = (i: number) => client.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: `hello ${i}` }], max_tokens: 4 + (i % 5) });
    const answers: unknown[] = [];
    // Ten rounds of five repeats, each round beside five other decisions and two chats.
    for (let round = 0; round < 10; round++) {
      const repeats = Array.from({ length: 5 }, () => decide());
      const others = [...Array.from({ length: 5 }, (_, i) => otherDecision(round * 5 + i)), chat(round * 2), chat(round * 2 + 1)];
      const [mine, theirs] = await Promise.all([Promise.all(repeats), Promise.all(others)]);
      for (const res of mine) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        answers.push(res.body.answers);
      }
      expect(theirs.every((r) => ('status' in r ? r.status === 200 : r.choices.length === 1))).toBe(true);
    }
    expect(answers).toHaveLength(50);
    // toEqual on numbers is exact: every probability is the one the request got alone.
    for (const answer of answers) expect(answer).toEqual(alone.body.answers);
  });

  it('a label that is not one token is refused, naming the reason', async () => {
    const chat = server.core.registry.find(CHAT)!;
    const backend = await server.core.registry.backendFor(chat, 'nextTokenLogprobs');
    const read = backend.nextTokenLogprobs!({ model: chat, messages: [{ role: 'user', content: 'hi' }], candidates: ['A', 'AB'], requestId: 'req_test', signal: new AbortController().signal });
    await expect(read).rejects.toMatchObject({
      kind: 'invalid_request',
      code: 'model_not_supported',
      message: `Model ${CHAT} cannot answer decisions: the option label "AB" is not a single token in its vocabulary`,
    });
  });
});
