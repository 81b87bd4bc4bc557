/**
 * What Claude Code (the pinned 2.1.x) sends to a gateway, learned against a recording fake
 * Anthropic server on loopback: the requests Sluice's Messages wire must take. When a new
 * Claude Code changes its requests, this test says how before the end-to-end tests fail.
 *
 * The CLI installs on demand into a cache folder; without the registry (a network-closed
 * machine) these tests are skipped, except in CI where they must run.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeBinary, runClaudeCode } from '../../helpers/claude-code.js';
import { startRecordingAnthropic, type AnthropicRecordedRequest, type RecordingAnthropic } from '../../helpers/recording-anthropic.js';

const claude = await claudeCodeBinary();

let anthropic: RecordingAnthropic;
beforeAll(async () => {
  anthropic = await startRecordingAnthropic();
});
afterAll(async () => anthropic?.close());

interface LoopOptions {
  env?: Record<string, string>;
  args?: string[];
  /** What Claude Code prints on stderr (nothing, unless a test says otherwise). */
  stderr?: string;
}

/** One tool loop (Write, then a final text) run against the recorder; its requests. */
async function recordedLoop(auth: { authToken?: string; apiKey?: string }, { env = {}, args = [], stderr = '' }: LoopOptions = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'sluice-claude-work-'));
  const target = join(cwd, 'hello.txt');
  anthropic.requests.length = 0;
  anthropic.enqueue([{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: target, content: 'recorded\n' } }]);
  anthropic.enqueue([{ type: 'text', text: 'Wrote hello.txt.' }]);
  const run = await runClaudeCode(claude!, { baseUrl: anthropic.baseUrl, ...auth, prompt: 'Create hello.txt containing "recorded"', cwd, env, args });
  expect(run.stderr).toBe(stderr);
  expect(run.code).toBe(0);
  expect(run.stdout.trim()).toBe('Wrote hello.txt.');
  expect(readFileSync(target, 'utf8')).toBe('recorded\n');
  return { requests: [...anthropic.requests], target };
}

const betas = (request: AnthropicRecordedRequest) => String(request.headers['anthropic-beta']).split(',');

describe.skipIf(claude === null)('Claude Code 2.1.337 against a recording Anthropic server', () => {
  it('ANTHROPIC_AUTH_TOKEN: two streamed POST /v1/messages?beta=true and nothing else (no count_tokens, no /v1/models)', { timeout: 180_000 }, async () => {
    const { requests, target } = await recordedLoop({ authToken: 'sk-sluice-recorded' });
    expect(requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ['POST', '/v1/messages', { beta: 'true' }],
      ['POST', '/v1/messages', { beta: 'true' }],
    ]);
    const [first, second] = requests as [AnthropicRecordedRequest, AnthropicRecordedRequest];
    expect(first.headers).toMatchObject({
      authorization: 'Bearer sk-sluice-recorded',
      'anthropic-version': '2023-06-01',
      'x-app': 'cli',
      'x-claude-code-session-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(first.headers['x-api-key']).toBeUndefined();
    expect(betas(first)).toContain('claude-code-20250219');
    expect(second.headers['x-claude-code-session-id']).toBe(first.headers['x-claude-code-session-id']);

    // The body: the default model, a 128k max_tokens, adaptive thinking and fields a gateway must accept.
    expect(first.body).toMatchObject({
      model: 'claude-opus-5-5',
      max_tokens: 128_000,
      stream: true,
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
      metadata: { user_id: expect.stringContaining('"session_id"') },
    });
    // The system prompt: text blocks, the billing line first (no cch value off Anthropic's own host), cache_control after.
    expect(first.body.system[0]).toEqual({ type: 'text', text: expect.stringMatching(/^x-anthropic-billing-header: cc_version=2\.1\.337\.[0-9a-f]{3}; cc_entrypoint=sdk-cli;$/) });
    expect(first.body.system[1]).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
    expect(second.body.system).toEqual(first.body.system);

    // Custom tools only, one deferred placeholder, JSON Schema 2020-12 inputs.
    const tools = first.body.tools as any[];
    expect(tools.every((t) => t.type === undefined && typeof t.input_schema === 'object')).toBe(true);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['Bash', 'Edit', 'Read', 'Write', 'ToolSearch']));
    expect(tools.filter((t) => t.defer_loading === true).map((t) => t.name)).toEqual(['DeferredToolPlaceholder']);
    expect(tools.find((t) => t.name === 'Write').input_schema).toMatchObject({
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    });

    // A role "system" message inside `messages`, after the first user turn, on every request.
    expect(first.body.messages.map((m: any) => m.role)).toEqual(['user', 'system']);
    expect(second.body.messages.map((m: any) => m.role)).toEqual(['user', 'system', 'assistant', 'user']);
    expect(second.body.messages[1].content).toEqual(expect.stringContaining('Primary working directory'));
    expect(second.body.messages[2].content).toEqual([
      { type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: target, content: 'recorded\n' } },
    ]);
    expect(second.body.messages[3].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_write',
        content: expect.stringContaining(`File created successfully at: ${target}`),
        cache_control: { type: 'ephemeral' },
      },
    ]);
  });

  it('ANTHROPIC_API_KEY goes as x-api-key; a non-Claude ANTHROPIC_DEFAULT_OPUS_MODEL is sent as named, with a warning and a 32k max_tokens', { timeout: 180_000 }, async () => {
    // Claude Code does not know the name: it warns on stderr, assumes a 1M context (the
    // context-1m beta) and asks for less output. An alias in sluice.yaml avoids all three.
    const warning = '[claude-code:unrecognized_model] {"model":"big-coder[1m]","query_source":"sdk"}\n';
    const { requests } = await recordedLoop({ apiKey: 'sk-sluice-recorded' }, { env: { ANTHROPIC_DEFAULT_OPUS_MODEL: 'big-coder' }, stderr: warning });
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.headers['x-api-key']).toBe('sk-sluice-recorded');
      expect(request.headers.authorization).toBeUndefined();
      expect(request.body).toMatchObject({ model: 'big-coder', max_tokens: 32_000 });
      expect(betas(request)).toContain('context-1m-2025-08-07');
    }
  });

  it('the haiku tier: a role "system" message after each tool result, counting the tokens left', { timeout: 180_000 }, async () => {
    const { requests } = await recordedLoop({ authToken: 'sk-sluice-recorded' }, { args: ['--model', 'haiku'] });
    expect(requests.map((r) => r.body.model)).toEqual(['claude-haiku-5-5', 'claude-haiku-5-5']);
    const second = requests[1]!.body.messages;
    expect(second.map((m: any) => m.role)).toEqual(['user', 'system', 'assistant', 'user', 'system']);
    expect(second[4].content).toEqual([
      { type: 'text', text: expect.stringMatching(/^<total_tokens>\d+ tokens left<\/total_tokens>$/), cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('ToolSearch: its result carries tool_reference blocks and text, and the tool it found joins `tools` as deferred', { timeout: 180_000 }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sluice-claude-work-'));
    anthropic.requests.length = 0;
    anthropic.enqueue([{ type: 'tool_use', id: 'toolu_search', name: 'ToolSearch', input: { query: 'select:WebFetch', max_results: 5 } }]);
    anthropic.enqueue([{ type: 'text', text: 'Found it.' }]);
    const run = await runClaudeCode(claude!, { baseUrl: anthropic.baseUrl, authToken: 'sk-sluice-recorded', prompt: 'Find a tool that fetches web pages', cwd });
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ code: 0, stdout: 'Found it.\n', stderr: '' });
    const [first, second] = anthropic.messages();
    const deferred = (request: AnthropicRecordedRequest) => request.body.tools.filter((t: any) => t.defer_loading === true).map((t: any) => t.name);
    expect(deferred(first!)).toEqual(['DeferredToolPlaceholder']);
    expect(deferred(second!)).toEqual(['WebFetch', 'DeferredToolPlaceholder']);
    expect(second!.body.messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_search', content: [{ type: 'tool_reference', tool_name: 'WebFetch' }] },
      { type: 'text', text: 'Tool loaded.', cache_control: { type: 'ephemeral' } },
    ]);
  });
});
