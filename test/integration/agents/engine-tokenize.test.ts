/**
 * Counting a prompt through the engine: the domain's PromptCounter (what a count_tokens
 * route calls) asks the model's engine's `POST /tokenize` at the server's root, in the
 * shapes vLLM, llama.cpp and SGLang take, and estimates when the engine has no such
 * endpoint (404) or fails. The engines are scripted fakes on loopback that record the
 * exact URL and body they received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import type { PromptToCount } from '../../../src/domain/models/prompt-count.types.js';
import { PromptCounter } from '../../../src/domain/completions/prompt-counter.js';

interface Received {
  method: string;
  url: string;
  body: Record<string, unknown>;
}

type Answer = (body: Record<string, unknown>) => { status: number; body: unknown };

/** An engine that answers `/tokenize` as `answer` says and records every request. */
async function startTokenizeEngine() {
  const received: Received[] = [];
  let answer: Answer = () => ({ status: 404, body: { error: 'Not Found' } });
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      const out = req.url === '/tokenize' ? answer(body) : { status: 404, body: { error: 'Not Found' } };
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    answer: (next: Answer) => (answer = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Engine = Awaited<ReturnType<typeof startTokenizeEngine>>;

const PROMPT: PromptToCount = {
  messages: [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'List the files.' },
  ],
  tools: [{ type: 'function', function: { name: 'Bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
  text: 'You are a coding agent.\nList the files.\nBash: Run a command',
};
const ESTIMATE = Math.ceil(Buffer.byteLength(PROMPT.text, 'utf8') / 4);

let engine: Engine;
let failing: Engine;
let server: TestServer;
const context = () => ({ requestId: 'req_count', signal: new AbortController().signal });
const counter = () => new PromptCounter(server.core.registry);
const count = (model: string) => counter().countPrompt(server.core.registry.find(model)!, PROMPT, context());

beforeAll(async () => {
  engine = await startTokenizeEngine();
  failing = await startTokenizeEngine();
  server = await startTestServer({
    yaml: `models:\n  coder: { base_url: ${engine.baseUrl}, upstream_model: org/coder-32b }\n  other: { base_url: ${failing.baseUrl} }\n`,
  });
});
afterAll(async () => {
  await server.close();
  await engine.close();
  await failing.close();
});
beforeEach(() => {
  engine.received.length = 0;
  failing.received.length = 0;
});

describe('countPrompt through the engine', () => {
  it('vLLM: POST /tokenize at the root with the messages, tools and rendered text; its count', async () => {
    engine.answer(() => ({ status: 200, body: { count: 57, max_model_len: 32768, tokens: Array.from({ length: 57 }, (_, i) => i) } }));
    expect(await count('coder')).toEqual({ tokens: 57, method: 'engine' });
    expect(engine.received).toEqual([
      {
        method: 'POST',
        url: '/tokenize',
        body: {
          model: 'org/coder-32b',
          messages: [
            { role: 'system', content: 'You are a coding agent.' },
            { role: 'user', content: 'List the files.' },
          ],
          tools: PROMPT.tools,
          add_generation_prompt: true,
          content: PROMPT.text,
        },
      },
    ]);
  });

  it('llama.cpp: reads `content`, answers only the tokens; their number', async () => {
    engine.answer((body) => ({ status: 200, body: { tokens: typeof body.content === 'string' ? [1, 2, 3, 4, 5, 6, 7, 8, 9] : [] } }));
    expect(await count('coder')).toEqual({ tokens: 9, method: 'engine' });
    expect(engine.received).toHaveLength(1);
  });

  it('SGLang: refuses the chat form (422), then counts {model, prompt}', async () => {
    engine.answer((body) =>
      body.prompt === undefined ? { status: 422, body: { detail: [{ loc: ['body', 'prompt'], msg: 'Field required' }] } } : { status: 200, body: { tokens: [1, 2], count: 2, max_model_len: 4096 } },
    );
    expect(await count('coder')).toEqual({ tokens: 2, method: 'engine' });
    expect(engine.received.map((r) => [r.url, r.body])).toEqual([
      ['/tokenize', expect.objectContaining({ messages: expect.any(Array) })],
      ['/tokenize', { model: 'org/coder-32b', prompt: PROMPT.text }],
    ]);
  });

  it('a rendered text alone: one request, {model, prompt, content}', async () => {
    engine.answer((body) => ({ status: 200, body: { count: String(body.prompt).length, max_model_len: 32768, tokens: [] } }));
    expect(await counter().count(server.core.registry.find('coder')!, 'twelve chars')).toEqual({ tokens: 12, method: 'engine' });
    expect(engine.received).toEqual([{ method: 'POST', url: '/tokenize', body: { model: 'org/coder-32b', prompt: 'twelve chars', content: 'twelve chars' } }]);
  });

  it("count_tokens (Anthropic's SDK): the engine counts the messages as it will read them, billing line removed; the header names the method", async () => {
    engine.answer(() => ({ status: 200, body: { count: 41, max_model_len: 32768, tokens: [] } }));
    const { key } = await server.newTenant({ balanceUsd: 1 });
    const client = new Anthropic({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
    const { data, response } = await client.messages
      .countTokens({
        model: 'coder',
        system: [{ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.337.a1; cc_entrypoint=cli; cch=9f3e1;' }, { type: 'text', text: 'You are a coding agent.' }],
        messages: [{ role: 'user', content: 'List the files.' }],
        tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      })
      .withResponse();
    expect(data).toEqual({ input_tokens: 41 });
    expect(response.headers.get('x-sluice-token-count-method')).toBe('engine');
    expect(engine.received).toHaveLength(1);
    expect(engine.received[0]!.body).toMatchObject({
      model: 'org/coder-32b',
      messages: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: 'List the files.' },
      ],
      tools: [{ type: 'function', function: { name: 'Bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
    });
  });

  it('a model counted in process (the GGUF runtime or a tokenizer.json) never asks an engine', async () => {
    const inProcess = server.core.registry.list().find((m) => !m.binding.upstream && m.entry.task === 'chat');
    expect(inProcess).toBeDefined();
    const counted = await counter().count(inProcess!, 'hello world');
    expect(['tokenizer', 'estimate']).toContain(counted.method);
    expect(engine.received).toEqual([]);
    expect(failing.received).toEqual([]);
  });

  it('an engine without /tokenize (404): the estimate, and the engine is not asked again for a while', async () => {
    engine.answer(() => ({ status: 404, body: { error: 'Not Found' } }));
    expect(await count('coder')).toEqual({ tokens: ESTIMATE, method: 'estimate' });
    expect(engine.received).toHaveLength(1);
    expect(await count('coder')).toEqual({ tokens: ESTIMATE, method: 'estimate' });
    expect(engine.received).toHaveLength(1);
  });

  it('an engine that fails (500) or answers no count: the estimate', async () => {
    failing.answer(() => ({ status: 500, body: { error: 'boom' } }));
    expect(await count('other')).toEqual({ tokens: ESTIMATE, method: 'estimate' });
    expect(failing.received).toHaveLength(1);
  });
});
