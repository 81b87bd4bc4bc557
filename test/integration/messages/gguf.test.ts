/**
 * Anthropic's Messages wire on the in-process GGUF runtime (no engine over HTTP), with
 * Anthropic's SDK: two generated tiny llama models with random weights (gguf-tools.test.ts's),
 * the catalog's instruct fixture answering text, and one that calls a function every
 * time. What is deterministic is tested: the message's shape and stop reason, a tool_use
 * block whose input fits the tool's schema, its tool_result going back as the runtime's
 * tool message, and a stream whose final message matches its events.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { buildToolCallingLlama } from '../../fixtures/model-builders/gguf-llama.js';
import { GGUF_RUNTIME_ENV, GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';

const TEXT_MODEL = 'LFM2.5-1.2B-Instruct';
const CALLER = 'LFM2.5-1.2B-Thinking';
const CALLER_DIR = 'tool-caller';
const SLOW = 180_000;
const WEATHER = { type: 'object' as const, properties: { sunny: { type: 'boolean' } }, required: ['sunny'], additionalProperties: false };

/** Greedy sampling: `temperature` is still taken on the wire, though the current SDK's types no longer list it. */
const GREEDY = { temperature: 0 } as object;

let server: TestServer;
let modelsDir: string;
let client: Anthropic;

beforeAll(async () => {
  if (!GGUF_RUNTIMES_DIR) return;
  modelsDir = buildTestModels([TEXT_MODEL]);
  buildToolCallingLlama(path.join(modelsDir, CALLER_DIR, 'model.gguf'));
  server = await startTestServer({ env: { MODELS_DIR: modelsDir, ...GGUF_RUNTIME_ENV }, yaml: `models:\n  ${CALLER}:\n    path: ${CALLER_DIR}\n` });
  const { key } = await server.newTenant({ balanceUsd: 5 });
  client = new Anthropic({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
}, 120_000);

describe.skipIf(!GGUF_RUNTIMES_DIR)('the Messages wire on the in-process GGUF runtime', () => {
  it('answers text, and streams the same way the SDK rebuilds it', { timeout: SLOW }, async () => {
    const answer = await client.messages.create({ model: TEXT_MODEL, max_tokens: 8, ...GREEDY, system: 'Be brief.', messages: [{ role: 'user', content: 'hello the world' }] });
    expect(answer).toMatchObject({ type: 'message', role: 'assistant', model: TEXT_MODEL, stop_reason: expect.stringMatching(/^(end_turn|max_tokens)$/) });
    expect(answer.content.every((block) => block.type === 'text')).toBe(true);
    expect(answer.usage.input_tokens).toBeGreaterThan(0);

    const events: any[] = [];
    const streamed = client.messages.stream({ model: TEXT_MODEL, max_tokens: 8, ...GREEDY, messages: [{ role: 'user', content: 'hello the world' }] });
    streamed.on('streamEvent', (event) => events.push(event));
    const final = await streamed.finalMessage();
    const text = events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('');
    expect(final.content).toEqual(text === '' ? [] : [{ type: 'text', text }]);
    expect(events[0].type).toBe('message_start');
    expect(events.at(-1).type).toBe('message_stop');
  });

  it('calls a tool as a tool_use block, and takes its tool_result back', { timeout: SLOW }, async () => {
    const tools = [{ name: 'weather', description: 'Weather in a city', input_schema: WEATHER }];
    const question = { role: 'user' as const, content: 'hello the world' };
    const first = await client.messages.create({ model: CALLER, max_tokens: 48, ...GREEDY, tools, messages: [question] });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((block) => block.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', id: expect.any(String), name: 'weather', input: { sunny: expect.any(Boolean) } });

    const second = await client.messages.create({
      model: CALLER,
      max_tokens: 48,
      ...GREEDY,
      tools,
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.id, content: 'sunny' }] }],
    });
    expect(second.type).toBe('message');
    expect(second.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens);
  });
});
