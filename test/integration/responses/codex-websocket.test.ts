/**
 * Codex 0.169 (the real CLI, codex-run.ts: its default configuration, nothing off
 * loopback) over the Responses API's WebSocket mode: the provider also says
 * `supports_websockets = true` (docs/responses.md), and Codex opens a WebSocket on
 * /v1/responses and runs its whole tool loop on it, in front of a scripted engine that
 * reasons and has it write a file. No `POST /v1/responses` is made; turn 2 carries turn
 * 1's reasoning, sealed and sent back by Codex with `store: false`, to the engine; each
 * turn is a usage record of /v1/responses.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCodex, type CodexRun } from '../../helpers/codex-run.js';
import { handler, startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { usageOf } from '../inference/setup.js';

const MODEL = 'gpt-oss-120b';
const FILE_TEXT = 'written over a WebSocket';
const REASONING = 'A file is wanted; printf writes it.';
const FINAL = 'I wrote hello.txt.';

type Json = Record<string, any>;

let engine: FakeUpstream;
let server: TestServer;
let run: CodexRun;
let projectId: string;
let upgrades = 0;
let posts = 0;

/** Turn 1: reasoning and an `exec_command` call writing the file; after its result: the final message. */
function engineTurn(req: RecordedRequest, res: ServerResponse): void {
  const body = req.body as Json;
  const afterTool = (body.messages as Json[]).at(-1)?.role === 'tool';
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Json, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', reasoning_content: afterTool ? 'Done.' : REASONING });
  if (afterTool) chunk({ content: FINAL });
  else chunk({ tool_calls: [{ index: 0, id: 'call_write', type: 'function', function: { name: 'exec_command', arguments: JSON.stringify({ cmd: `printf '${FILE_TEXT}' > hello.txt` }) } }] });
  chunk({}, afterTool ? 'stop' : 'tool_calls');
  res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } })}\n\n`);
  res.end('data: [DONE]\n\n');
}

beforeAll(async () => {
  engine = await startFakeUpstream();
  engine.setDefault('/chat/completions', handler(engineTurn));
  server = await startTestServer({ yaml: `models:\n  ${MODEL}: { backend: openai, base_url: "${engine.baseUrl}" }\n` });
  server.app.server.on('upgrade', (req: { url?: string }) => (req.url === '/v1/responses' ? upgrades++ : undefined));
  server.app.server.on('request', (req: { method?: string; url?: string }) => (req.method === 'POST' && req.url === '/v1/responses' ? posts++ : undefined));
  const tenant = await server.newTenant({ balanceUsd: 100 });
  projectId = tenant.projectId;
  run = await runCodex({ baseUrl: `${server.baseUrl}/v1`, apiKey: tenant.key, model: MODEL, prompt: 'Write hello.txt.', providerLines: ['supports_websockets = true'] });
}, 180_000);
afterAll(async () => {
  run?.cleanup();
  await server?.close();
  await engine?.close();
});

it('runs the tool loop over the WebSocket: the file is written, no POST is made, the reasoning comes back sealed, each turn is billed', async () => {
  expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: '' });
  expect(readFileSync(join(run.workdir, 'hello.txt'), 'utf8')).toBe(FILE_TEXT);
  expect(run.stdout).toContain(FINAL);
  expect(upgrades).toBeGreaterThanOrEqual(1);
  expect(posts).toBe(0);
  const bodies = engine.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body as Json);
  expect(bodies).toHaveLength(2);
  const messages = bodies[1]!.messages as Json[];
  expect(messages.find((m) => m.role === 'assistant' && m.tool_calls)).toMatchObject({ reasoning_content: REASONING, tool_calls: [{ id: 'call_write' }] });
  expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_write' });
  expect((await usageOf(server, projectId)).map((r) => r.route)).toEqual(['/v1/responses', '/v1/responses']);
  // Codex 0.169 tries these hosts through its proxy; none of it reaches the network.
  const known = new Set(['CONNECT github.com:443', 'CONNECT api.github.com:443', 'CONNECT chatgpt.com:443', 'CONNECT ab.chatgpt.com:443']);
  expect(run.offLoopback.filter((attempt) => !known.has(attempt))).toEqual([]);
});
