/**
 * Claude Code through the signed gateway: `ANTHROPIC_BASE_URL` points at a loopback proxy
 * standing in for the intermediary's edge, which signs each request for one agent and sends
 * it to `/gateway/v1/messages`. The tool loop writes the file as it does on `/v1`, and both
 * turns are billed to the intermediary for that agent: settled in its usage reports, and
 * recorded with the intermediary as payer.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayProjectId } from '../../../src/composition/gateway.js';
import { claudeCodeBinary, runClaudeCode } from '../../helpers/claude-code.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { KID, SECRET, gatewayEnvVars } from '../gateway/setup.js';
import { startSigningProxy, type SigningProxy } from '../gateway/signing-proxy.js';
import { usageOf } from '../inference/setup.js';
import { CONTENT, FINAL, PROMPT, claudeCodeYaml, expectEngineSawTheLoop, scriptWriteLoop } from './setup.js';

const claude = await claudeCodeBinary();

const AGENT = 'agt_claude_code';
/** What an intermediary's edge passes on from the client besides its own signed headers. */
const CLIENT_HEADERS = ['anthropic-version', 'anthropic-beta', 'x-claude-code-session-id'];

let engine: FakeUpstream;
let intermediary: FakeIntermediary;
let server: TestServer;
let proxy: SigningProxy;

describe.skipIf(claude === null)('Claude Code through the signed gateway', () => {
  beforeAll(async () => {
    engine = await startFakeUpstream();
    intermediary = await startFakeIntermediary();
    server = await startTestServer({ yaml: claudeCodeYaml(engine.baseUrl), env: gatewayEnvVars(intermediary.baseUrl), startWorkers: true });
    proxy = await startSigningProxy(server.baseUrl, { kid: KID, secret: SECRET }, AGENT, CLIENT_HEADERS);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    await intermediary?.close();
    await engine?.close();
  });

  it('the tool loop writes the file, and both turns are billed to the intermediary for the agent', { timeout: 180_000 }, async () => {
    const { cwd, target, call } = scriptWriteLoop(engine);
    const run = await runClaudeCode(claude!, { baseUrl: `${proxy.baseUrl}/gateway`, authToken: 'unused-behind-the-edge', prompt: PROMPT, cwd });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.trim()).toBe(FINAL);
    expect(readFileSync(target, 'utf8')).toBe(CONTENT);
    expectEngineSawTheLoop(engine, call, target);

    expect(proxy.answers.map((a) => [a.path, a.status])).toEqual([
      ['/gateway/v1/messages?beta=true', 200],
      ['/gateway/v1/messages?beta=true', 200],
    ]);
    // Each turn settled once with the intermediary: its tokens, for this agent, under the request id the edge gave.
    await intermediary.waitForAccepted(4);
    const settled = [...intermediary.accepted.values()];
    expect(settled.every((e) => e.agentId === AGENT)).toBe(true);
    for (const { requestId } of proxy.answers) {
      const meters = Object.fromEntries(settled.filter((e) => e.requestId === requestId).map((e) => [e.meter, e.quantity]));
      expect(meters).toEqual({ input_tokens: 11, output_tokens: 7 });
    }
    // Recorded for the gateway's tenant with the intermediary as payer, under the session the edge passed on.
    const records = await usageOf(server, gatewayProjectId('default'));
    expect(records.map((r) => [r.route, r.model, r.status, r.inputTokens, r.outputTokens, r.payer])).toEqual([
      ['/gateway/v1/messages', 'big-coder', 200, 11, 7, { kind: 'intermediary', id: 'default' }],
      ['/gateway/v1/messages', 'big-coder', 200, 11, 7, { kind: 'intermediary', id: 'default' }],
    ]);
    expect(records[0]!.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(records[1]!.sessionId).toBe(records[0]!.sessionId);
  });
});
