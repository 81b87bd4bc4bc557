/**
 * Claude Code's `x-anthropic-billing-header: …cch=<random>;` line at the head of the system
 * prompt never reaches the engine (its prefix cache then holds across turns), unless
 * `agents.strip_billing_header: false`. A fake engine on loopback records what it got.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { startInferenceEnv, type InferenceEnv } from '../inference/setup.js';

const header = (cch: string) => `x-anthropic-billing-header: cc_version=2.1.337.a1f; cc_entrypoint=cli; cch=${cch};`;
const SYSTEM = 'You are Claude Code, a coding agent.\n  Keep indentation.  ';

async function twoTurns(env: InferenceEnv, key: string, system: (cch: string) => unknown) {
  env.upstream.reset();
  for (const cch of ['3fa9c', '0b71e']) {
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', {
      key,
      body: { model: 'gpt-oss-120b', messages: [{ role: 'system', content: system(cch) }, { role: 'user', content: 'Hello' }] },
    });
    expect(res.status).toBe(200);
  }
  return env.upstream.requests.map((r) => r.body.messages as { role: string; content: unknown }[]);
}

describe('on by default', () => {
  let env: InferenceEnv;
  let key: string;
  beforeAll(async () => {
    env = await startInferenceEnv();
    key = (await env.server.newTenant()).key;
  });
  afterAll(async () => env.close());

  it('a system string opening with the line: two turns with different cch reach the engine identical, without it', async () => {
    const [first, second] = await twoTurns(env, key, (cch) => `${header(cch)}\n${SYSTEM}`);
    expect(first).toEqual(second);
    expect(first![0]).toEqual({ role: 'system', content: SYSTEM });
  });

  it('text parts (the line its own part, as Claude Code sends it): the part is dropped, the rest kept', async () => {
    const [first, second] = await twoTurns(env, key, (cch) => [
      { type: 'text', text: header(cch) },
      { type: 'text', text: SYSTEM },
    ]);
    expect(first).toEqual(second);
    expect(first![0]).toEqual({ role: 'system', content: SYSTEM });
  });

  it('a system message that is only the line is left out', async () => {
    const [first] = await twoTurns(env, key, (cch) => header(cch));
    expect(first).toEqual([{ role: 'user', content: 'Hello' }]);
  });

  it('the line anywhere but the head, or in a user message, is left as sent', async () => {
    const [first] = await twoTurns(env, key, (cch) => `${SYSTEM}\n${header(cch)}`);
    expect(first![0]!.content).toBe(`${SYSTEM}\n${header('3fa9c')}`);
    env.upstream.reset();
    const res = await call(env.server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'gpt-oss-120b', messages: [{ role: 'user', content: header('aaaaa') }] } });
    expect(res.status).toBe(200);
    expect(env.upstream.requests[0]!.body.messages).toEqual([{ role: 'user', content: header('aaaaa') }]);
  });
});

describe('agents.strip_billing_header: false', () => {
  let env: InferenceEnv;
  let key: string;
  beforeAll(async () => {
    env = await startInferenceEnv({ yamlTail: 'agents:\n  strip_billing_header: false\n' });
    key = (await env.server.newTenant()).key;
  });
  afterAll(async () => env.close());

  it('the engine gets the system prompt as sent', async () => {
    const [first, second] = await twoTurns(env, key, (cch) => `${header(cch)}\n${SYSTEM}`);
    expect(first![0]!.content).toBe(`${header('3fa9c')}\n${SYSTEM}`);
    expect(second![0]!.content).toBe(`${header('0b71e')}\n${SYSTEM}`);
  });
});
