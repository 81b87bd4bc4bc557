/**
 * A protocol is one folder and one registration: a fixture protocol (test/helpers/toy-protocol.ts,
 * a fake engine on loopback speaking a toy JSON protocol), registered next to OpenAI's the
 * way the server's own list registers it, gets deployments, retries, cooldowns and a
 * fallback across protocols to an OpenAI deployment, and its usage is recorded as any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { deadEngineUrl } from '../../helpers/engine-process.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startToyEngine, toyProtocol, type ToyEngine } from '../../helpers/toy-protocol.js';
import { UPSTREAM_PROTOCOLS } from '../../../src/inference/upstream/protocols.js';
import { usageOf } from '../inference/setup.js';

let dead: string;
let failing: ToyEngine;
let healthy: ToyEngine;
let openai: FakeUpstream;
let server: TestServer;
let key: string;
let projectId: string;

const toyDeployment = (id: string, baseUrl: string) => `        - { id: ${id}, base_url: ${baseUrl}, upstream_model: ${id} }\n`;

function yaml(): string {
  return `routing:
  retries: 2
  cooldown: { failures: 1, window_seconds: 60, seconds: 30 }
models:
  toy-down:
    kind: chat
    upstream:
      protocol: toy
      deployments:
${toyDeployment('toy-dead', dead)}${toyDeployment('toy-503', failing.baseUrl)}
    fallbacks: [gpt-backup]
  gpt-backup:
    kind: chat
    base_url: ${openai.baseUrl}
    upstream_model: backup
    price: { input_per_million_usd: 3, output_per_million_usd: 6 }
  toy-ok:
    kind: chat
    price: { input_per_million_usd: 1, output_per_million_usd: 2 }
    upstream:
      protocol: toy
      deployments:
${toyDeployment('toy-good', healthy.baseUrl)}
  toy-retry:
    kind: chat
    upstream:
      protocol: toy
      deployments:
${toyDeployment('toy-flaky', failing.baseUrl)}${toyDeployment('toy-steady', healthy.baseUrl)}
`;
}

beforeAll(async () => {
  [dead, failing, healthy, openai] = await Promise.all([deadEngineUrl(), startToyEngine(), startToyEngine(), startFakeUpstream()]);
  failing.failing = true;
  server = await startTestServer({ yaml: yaml(), env: { RATE_LIMIT_RPM: '1000000' }, overrides: { upstreamProtocols: [...UPSTREAM_PROTOCOLS, toyProtocol] } });
  ({ key, projectId } = await server.newTenant({ balanceUsd: 100 }));
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([failing?.close(), healthy?.close(), openai?.close()]);
});

const chat = (model: string, content = 'hello there') => call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content }] } });
const recordOf = async (res: { headers: Headers }) => (await usageOf(server, projectId)).find((r) => r.requestId === res.headers.get('x-request-id'));

describe('a fixture protocol behind deployments', () => {
  it('answers from a toy deployment, with the usage the engine reported, billed at the model price', async () => {
    const res = await chat('toy-ok', 'hello there');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('toy-ok');
    expect(res.body.choices[0].message.content).toBe('toy-good says: hello there');
    expect(res.body.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 4 });
    expect(res.headers.get('x-sluice-fallback')).toBeNull();
    expect(healthy.voices).toContain('toy-good');
    // 2 tokens in at $1/M and 4 out at $2/M.
    expect(await recordOf(res)).toMatchObject({ model: 'toy-ok', deployment: 'toy-good', inputTokens: 2, outputTokens: 4, costMicros: 10, status: 200 });
  });

  it('retries a failing toy deployment on the next one and cools the failing one down', async () => {
    // 20 calls: the weighted pick reaches the flaky one first at least once (all but certainly), and after that failure never again.
    for (let i = 0; i < 20; i++) {
      const res = await chat('toy-retry');
      expect(res.status).toBe(200);
      expect(res.body.choices[0].message.content).toBe('toy-steady says: hello there');
      expect(await recordOf(res)).toMatchObject({ model: 'toy-retry', deployment: 'toy-steady' });
    }
    expect(failing.voices.filter((v) => v === 'toy-flaky')).toHaveLength(1);
    const model = await call(server.baseUrl, 'GET', '/v1/models/toy-retry', { key });
    expect(model.body.deployments.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([
      ['toy-flaky', 'cooling_down'],
      ['toy-steady', 'ready'],
    ]);
  });

  it('falls back across protocols when every toy deployment is dead or failing: the OpenAI deployment answers, the header and the usage record name it', async () => {
    const res = await chat('toy-down');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('gpt-backup');
    expect(res.headers.get('x-sluice-fallback')).toBe('gpt-backup');
    expect(openai.requests.at(-1)?.body).toMatchObject({ model: 'backup' });
    expect(failing.voices).toContain('toy-503');
    // The fake OpenAI engine reports 11 tokens in and 7 out: at $3/M and $6/M, the fallback's price.
    expect(await recordOf(res)).toMatchObject({ model: 'gpt-backup', deployment: 'gpt-backup', inputTokens: 11, outputTokens: 7, costMicros: 75, status: 200 });
    const model = await call(server.baseUrl, 'GET', '/v1/models/toy-down', { key });
    expect(model.body.deployments.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([
      ['toy-dead', 'cooling_down'],
      ['toy-503', 'cooling_down'],
    ]);
  });

  it('refuses a capability the protocol lacks with 503 model_not_available', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'toy-ok', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'model_not_available' });
    expect(res.body.error.message).toContain('the toy protocol cannot serve chat models (chatStream)');
  });
});
