/**
 * Codex 0.169 with its default configuration (a custom provider, `wire_api = "responses"`,
 * no feature flags) completes a tool loop through Sluice over HTTP, in front of a scripted
 * engine that reasons: turn 1 answers with an `exec_command` call that writes a file,
 * turn 2 with a final message. Codex's first request carries the namespace tool
 * `multi_agent_v1`, a `web_search` tool, `store: false`,
 * `include: ["reasoning.encrypted_content"]`, `prompt_cache_key` and `client_metadata`:
 * the engine receives the namespace's functions under flat names and no web_search, and
 * on turn 2 the reasoning Codex carried back sealed, as `reasoning_content`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler, startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { runCodex, type CodexRun } from '../../helpers/codex-run.js';

const MODEL = 'gpt-oss-120b';
const FILE_TEXT = 'written by codex through sluice';
const TURN_1_REASONING = 'The user wants a file; I will write it with printf.';
const FINAL = 'I wrote note.txt.';

let engine: FakeUpstream;
let server: TestServer;
let run: CodexRun;

type Json = Record<string, any>;

/** One streamed chat answer: reasoning, then a tool call or text, then usage. */
function streamAnswer(res: ServerResponse, body: Json, answer: { reasoning: string; toolCall?: Json; content?: string }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Json, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', reasoning_content: answer.reasoning });
  if (answer.toolCall) chunk({ tool_calls: [{ index: 0, ...answer.toolCall }] });
  else chunk({ content: answer.content });
  chunk({}, answer.toolCall ? 'tool_calls' : 'stop');
  res.write(`data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } })}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** Turn 1 (no tool result yet): write the file; after the tool's result: the final message. */
function codexEngine(req: RecordedRequest, res: ServerResponse): void {
  const body = req.body as Json;
  const afterTool = (body.messages as Json[]).at(-1)?.role === 'tool';
  if (afterTool) {
    streamAnswer(res, body, { reasoning: 'The file is written.', content: FINAL });
    return;
  }
  const args = JSON.stringify({ cmd: `printf '${FILE_TEXT}' > note.txt` });
  streamAnswer(res, body, { reasoning: TURN_1_REASONING, toolCall: { id: 'call_write', type: 'function', function: { name: 'exec_command', arguments: args } } });
}

beforeAll(async () => {
  engine = await startFakeUpstream();
  engine.setDefault('/chat/completions', handler(codexEngine));
  server = await startTestServer({ yaml: `models:\n  ${MODEL}: { backend: openai, base_url: "${engine.baseUrl}" }\n` });
  const { key } = await server.newTenant({ balanceUsd: 100 });
  run = await runCodex({ baseUrl: `${server.baseUrl}/v1`, apiKey: key, model: MODEL, prompt: 'Write note.txt.' });
}, 180_000);
afterAll(async () => {
  run?.cleanup();
  await server?.close();
  await engine?.close();
});

const chatBodies = () => engine.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body as Json);

describe('Codex 0.169 over HTTP, default configuration', () => {
  it('completes the tool loop: the file is written and Codex prints the final message', () => {
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(readFileSync(join(run.workdir, 'note.txt'), 'utf8')).toBe(FILE_TEXT);
    expect(run.stdout).toContain(FINAL);
    expect(chatBodies()).toHaveLength(2);
  });

  it('the engine receives the namespace\'s functions under flat names, and neither web_search nor client_metadata', () => {
    const [first] = chatBodies();
    const names = (first!.tools as Json[]).map((tool) => tool.function.name as string);
    expect(names).toContain('exec_command');
    expect(names.filter((name) => name.startsWith('multi_agent_v1__')).sort()).toEqual([
      'multi_agent_v1__close_agent', 'multi_agent_v1__resume_agent', 'multi_agent_v1__send_input', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__wait_agent',
    ]);
    expect((first!.tools as Json[]).every((tool) => tool.type === 'function')).toBe(true);
    expect(first).not.toHaveProperty('client_metadata');
    expect(first).not.toHaveProperty('include');
    expect(first).not.toHaveProperty('store');
    expect(typeof first!.prompt_cache_key).toBe('string');
  });

  it('turn 2 carries turn 1\'s reasoning, sealed by Sluice and sent back by Codex, to the engine as reasoning_content', () => {
    const second = chatBodies()[1]!;
    const messages = second.messages as Json[];
    const call = messages.find((m) => m.role === 'assistant' && m.tool_calls);
    expect(call).toMatchObject({ reasoning_content: TURN_1_REASONING, tool_calls: [{ id: 'call_write', function: { name: 'exec_command' } }] });
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_write' });
  });

  it('sends nothing off loopback: what it tries (its update check and telemetry) meets the refusing proxy', () => {
    // Codex 0.169 tries these hosts through HTTPS_PROXY; nothing else, and none of it reaches the network.
    const known = new Set(['CONNECT github.com:443', 'CONNECT api.github.com:443', 'CONNECT chatgpt.com:443', 'CONNECT ab.chatgpt.com:443']);
    expect(run.offLoopback.filter((attempt) => !known.has(attempt))).toEqual([]);
  });
});
