/**
 * Claude Code's `X-Claude-Code-Session-Id` is kept on the usage record of every call that
 * sends it (chat completions, Responses, embeddings), streamed or not; a value that is no
 * plain id is not kept and refuses nothing. Runs on SQLite, and on PostgreSQL under
 * `npm run test:postgres`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from '../inference/setup.js';

const SESSION = '5f0c2b7e-9a1d-4c3b-8e2f-1a2b3c4d5e6f';

let env: InferenceEnv;
let key: string;
let projectId: string;

beforeAll(async () => {
  env = await startInferenceEnv();
  ({ key, projectId } = await env.server.newTenant());
});
afterAll(async () => env.close());

const post = (path: string, body: unknown, session?: string) =>
  call(env.server.baseUrl, 'POST', path, { key, body, headers: session === undefined ? {} : { 'x-claude-code-session-id': session } });

describe('X-Claude-Code-Session-Id', () => {
  it('is on the usage record of each call that sent it, and only those', async () => {
    const chat = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello' }] };
    expect((await post('/v1/chat/completions', chat, SESSION)).status).toBe(200);
    const streamed = await post('/v1/chat/completions', { ...chat, stream: true }, SESSION);
    expect(streamed.status).toBe(200);
    expect((await post('/v1/responses', { model: 'gpt-oss-120b', input: 'Hello' }, SESSION)).status).toBe(200);
    expect((await post('/v1/embeddings', { model: 'all-minilm-l6-v2', input: 'hello' }, SESSION)).status).toBe(200);
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);
    expect((await post('/v1/chat/completions', chat, 'not an id; drop table')).status).toBe(200);

    const records = await usageOf(env.server, projectId);
    const byRoute = records
      .map((r) => [r.route, r.sessionId ?? null] as const)
      .sort(([a, x], [b, y]) => a.localeCompare(b) || String(x).localeCompare(String(y)));
    expect(byRoute).toEqual([
      ['/v1/chat/completions', SESSION],
      ['/v1/chat/completions', SESSION],
      ['/v1/chat/completions', null],
      ['/v1/chat/completions', null],
      ['/v1/embeddings', SESSION],
      ['/v1/responses', SESSION],
    ]);
  });
});
