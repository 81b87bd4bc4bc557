/**
 * Claude Code itself (`claude -p`, the pinned 2.1.x) through Sluice's `/v1/messages`, in
 * front of a scripted OpenAI-protocol engine on loopback that thinks aloud, asks for Claude
 * Code's Write tool, then answers once the tool's result is back. The agent writes the
 * file; the engine saw the tool, the call and its result as a tool message, and never the
 * earlier thinking; each turn is one usage record. The same run through the signed gateway
 * (a loopback proxy signs each request, as an intermediary's edge does) is billed to the
 * intermediary for its agent.
 *
 * Claude Code's own model names reach the engine's models through `aliases` in sluice.yaml,
 * as the docs tell a newcomer (docs/claude-code.md). The CLI installs on demand; without the
 * registry the suite is skipped, except in CI (SLUICE_TEST_REQUIRE_AGENT_CLIS=1).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claudeCodeBinary, runClaudeCode } from '../../helpers/claude-code.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { toolLoop } from '../../helpers/tool-loop-engine.js';
import { usageOf } from '../inference/setup.js';
import { CONTENT, FINAL, PROMPT, SMALL, claudeCodeYaml, expectEngineSawTheLoop, scriptWriteLoop } from './setup.js';

const claude = await claudeCodeBinary();

let engine: FakeUpstream;
let server: TestServer;

describe.skipIf(claude === null)('Claude Code through /v1/messages', () => {
  beforeAll(async () => {
    engine = await startFakeUpstream();
    server = await startTestServer({ yaml: claudeCodeYaml(engine.baseUrl) });
  });
  afterAll(async () => {
    await server?.close();
    await engine?.close();
  });
  beforeEach(() => engine.reset());

  it('ANTHROPIC_AUTH_TOKEN, Claude Code default model: a tool loop that writes the file, billed per turn', { timeout: 180_000 }, async () => {
    const { cwd, target, call } = scriptWriteLoop(engine);
    const tenant = await server.newTenant();
    const run = await runClaudeCode(claude!, { baseUrl: server.baseUrl, authToken: tenant.key, prompt: PROMPT, cwd });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(FINAL);
    expect(readFileSync(target, 'utf8')).toBe(CONTENT);
    expectEngineSawTheLoop(engine, call, target);

    // One record per turn: the model that served it, the engine's tokens, and Claude Code's session on both.
    const records = await usageOf(server, tenant.projectId);
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(record).toMatchObject({ route: '/v1/messages', model: 'big-coder', status: 200, inputTokens: 11, outputTokens: 7 });
      expect(record.payer).toEqual({ kind: 'project', id: tenant.projectId });
    }
    expect(records[0]!.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(records[1]!.sessionId).toBe(records[0]!.sessionId);
  });

  it('ToolSearch: the deferred tool it loads reaches the engine on the next turn, the placeholder never', { timeout: 180_000 }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sluice-claude-work-'));
    const search = { id: 'call_search', name: 'ToolSearch', arguments: JSON.stringify({ query: 'select:WebFetch', max_results: 5 }) };
    engine.setDefault('/chat/completions', toolLoop(search, 'Found it.', { answeredAnywhere: true }));
    const tenant = await server.newTenant();
    const run = await runClaudeCode(claude!, { baseUrl: server.baseUrl, authToken: tenant.key, prompt: 'Find a tool that fetches web pages', cwd });
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: 'Found it.\n', stderr: '' });
    const bodies = engine.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body);
    expect(bodies).toHaveLength(2);
    const names = (body: any) => body.tools.map((t: any) => t.function.name);
    expect(names(bodies[0])).toContain('ToolSearch');
    expect(names(bodies[0])).not.toContain('WebFetch');
    expect(names(bodies[1])).toContain('WebFetch');
    for (const body of bodies) expect(names(body)).not.toContain('DeferredToolPlaceholder');
    const toolMessage = bodies[1].messages.find((m: any) => m.role === 'tool');
    expect(toolMessage).toEqual({ role: 'tool', tool_call_id: 'call_search', content: 'Tool loaded: WebFetch' });
  });

  it('ANTHROPIC_API_KEY and the haiku tier: the same loop on the small model', { timeout: 180_000 }, async () => {
    const { cwd, target, call } = scriptWriteLoop(engine);
    const tenant = await server.newTenant();
    const run = await runClaudeCode(claude!, { baseUrl: server.baseUrl, apiKey: tenant.key, prompt: PROMPT, cwd, args: ['--model', 'haiku'] });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(readFileSync(target, 'utf8')).toBe(CONTENT);
    expectEngineSawTheLoop(engine, call, target, SMALL);
    expect((await usageOf(server, tenant.projectId)).map((r) => r.model)).toEqual(['small-coder', 'small-coder']);
  });

  it('a wrong key: Claude Code stops with an authentication error and the engine is never called', { timeout: 180_000 }, async () => {
    const { cwd, target } = scriptWriteLoop(engine);
    // Claude Code retries a 401 with growing pauses (minutes in all), as it would against Anthropic: not here.
    const env = { CLAUDE_CODE_MAX_RETRIES: '0' };
    const run = await runClaudeCode(claude!, { baseUrl: server.baseUrl, authToken: 'sk-not-a-sluice-key', prompt: PROMPT, cwd, env });
    // Sluice answers a key it does not know as Anthropic does (401 authentication_error); Claude Code says so and stops.
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('Failed to authenticate. API Error: 401 Invalid credentials\n');
    expect(engine.requests).toEqual([]);
    expect(() => readFileSync(target)).toThrow(/ENOENT/);
  });
});
