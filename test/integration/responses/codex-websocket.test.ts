/**
 * Codex (0.169, the real CLI, installed on demand into a cache folder) over the Responses
 * API's WebSocket mode: a custom provider with `wire_api = "responses"` and
 * `supports_websockets = true` (docs/responses.md) opens a WebSocket on /v1/responses and
 * runs its tool loop on it, in front of a scripted engine that has it write a file. No
 * `POST /v1/responses` is made: every turn goes over the socket.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { agentCli } from '../../helpers/agent-cli.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { toolLoop } from '../../helpers/tool-loop-engine.js';
import { inferenceYaml, usageOf } from '../inference/setup.js';

let upstream: FakeUpstream;
let server: TestServer;
let codex: string;

beforeAll(async () => {
  codex = await agentCli('codex');
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl) });
}, 300_000);
afterAll(async () => {
  await server.close();
  await upstream.close();
});

/** The provider configuration that makes Codex prefer the WebSocket. */
const codexConfig = (baseUrl: string) => `model = "gpt-oss-120b"
model_provider = "sluice"

[model_providers.sluice]
name = "Sluice"
base_url = "${baseUrl}/v1"
env_key = "SLUICE_API_KEY"
wire_api = "responses"
supports_websockets = true
`;

function runCodex(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(codex, args, { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

it('runs a tool loop that writes a file over one WebSocket; billed per turn as over HTTP', { timeout: 180_000 }, async () => {
  const { key, projectId } = await server.newTenant();
  const home = mkdtempSync(join(tmpdir(), 'sluice-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'sluice-codex-work-'));
  writeFileSync(join(home, 'config.toml'), codexConfig(server.baseUrl));
  upstream.setDefault(
    '/chat/completions',
    toolLoop({ id: 'call_write', name: 'exec_command', arguments: JSON.stringify({ cmd: "printf 'written over a WebSocket' > hello.txt" }) }, 'Wrote hello.txt.'),
  );
  let upgrades = 0;
  let posts = 0;
  const onUpgrade = (req: { url?: string }) => (req.url === '/v1/responses' ? upgrades++ : undefined);
  const onRequest = (req: { method?: string; url?: string }) => (req.method === 'POST' && req.url === '/v1/responses' ? posts++ : undefined);
  server.app.server.on('upgrade', onUpgrade);
  server.app.server.on('request', onRequest);
  try {
    // Until namespace and hosted tools are accepted, Codex's multi-agent tools and web search are switched off.
    const result = await runCodex(
      ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--disable', 'multi_agent', '-c', 'web_search="disabled"', '-C', work, 'Write hello.txt.'],
      { CODEX_HOME: home, SLUICE_API_KEY: key },
    );
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    expect(result.stdout).toContain('Wrote hello.txt.');
    expect(readFileSync(join(work, 'hello.txt'), 'utf8')).toBe('written over a WebSocket');
  } finally {
    server.app.server.off('upgrade', onUpgrade);
    server.app.server.off('request', onRequest);
  }
  expect(upgrades).toBeGreaterThanOrEqual(1);
  expect(posts).toBe(0);
  // Two engine calls (the tool call, then the answer after its output), each a usage record of /v1/responses.
  expect(upstream.count('/chat/completions')).toBe(2);
  expect(upstream.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_write' });
  const records = await usageOf(server, projectId);
  expect(records.map((r) => r.route)).toEqual(['/v1/responses', '/v1/responses']);
});
