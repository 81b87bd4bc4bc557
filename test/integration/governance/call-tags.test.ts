/**
 * A call's tags (the `x-sluice-tags` header and the body's `metadata.tags`) and end user
 * (OpenAI's `user` / `safety_identifier`, Anthropic's `metadata.user_id`) are kept on its
 * usage record, on every wire; a bad tag is a 400 in the wire's own envelope naming the
 * header or field, and nothing is recorded. The Responses WebSocket takes the header of its
 * upgrade for every response it runs. Runs on SQLite, and on PostgreSQL under
 * `npm run test:postgres`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { startInferenceEnv, usageOf, type InferenceEnv } from '../inference/setup.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';

let env: InferenceEnv;
let key: string;
let projectId: string;

beforeAll(async () => {
  env = await startInferenceEnv();
  ({ key, projectId } = await env.server.newTenant());
});
afterAll(async () => env.close());

const post = (path: string, body: unknown, tags?: string) =>
  call(env.server.baseUrl, 'POST', path, { key, body, headers: tags === undefined ? {} : { 'x-sluice-tags': tags } });

const chat = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello' }] };

/** The labels of the records written since `before` records, oldest first. */
async function labelsSince(before: number) {
  const records = (await usageOf(env.server, projectId)).reverse().slice(before);
  return records.map((r) => ({ route: r.route, tags: r.tags ?? null, endUser: r.endUser ?? null }));
}

describe('tags', () => {
  it('come from the header and metadata.tags, merged in that order without duplicates', async () => {
    const before = (await usageOf(env.server, projectId)).length;
    expect((await post('/v1/chat/completions', { ...chat, metadata: { tags: 'team-a, prod' } }, 'feature:search,prod')).status).toBe(200);
    expect((await post('/v1/chat/completions', { ...chat, stream: true, metadata: { tags: ['batch-job', 'env=dev'] } })).status).toBe(200);
    expect((await post('/v1/responses', { model: 'gpt-oss-120b', input: 'Hello', metadata: { tags: 'team-b' } }, 'x/y')).status).toBe(200);
    expect((await post('/v1/embeddings', { model: 'all-minilm-l6-v2', input: 'hello' }, 'emb')).status).toBe(200);
    expect((await post('/v1/messages', { model: 'gpt-oss-120b', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }, 'claude')).status).toBe(200);
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);
    expect(await labelsSince(before)).toEqual([
      { route: '/v1/chat/completions', tags: ['feature:search', 'prod', 'team-a'], endUser: null },
      { route: '/v1/chat/completions', tags: ['batch-job', 'env=dev'], endUser: null },
      { route: '/v1/responses', tags: ['x/y', 'team-b'], endUser: null },
      { route: '/v1/embeddings', tags: ['emb'], endUser: null },
      { route: '/v1/messages', tags: ['claude'], endUser: null },
      { route: '/v1/chat/completions', tags: null, endUser: null },
    ]);
  });

  it('a bad header or metadata.tags is a 400 naming it, in the wire envelope, and nothing is recorded', async () => {
    const before = (await usageOf(env.server, projectId)).length;
    const spaced = await post('/v1/chat/completions', chat, 'ok,not ok');
    expect(spaced.status).toBe(400);
    expect(spaced.body).toEqual({
      error: {
        message: 'x-sluice-tags: a tag may hold only letters, digits and . _ : / = - (got "not ok")',
        type: 'invalid_request_error',
        param: 'x-sluice-tags',
        code: 'invalid_request_error',
      },
    });
    const many = await post('/v1/chat/completions', chat, Array.from({ length: 17 }, (_, i) => `t${i}`).join(','));
    expect(many.status).toBe(400);
    expect(many.body.error).toMatchObject({ message: 'x-sluice-tags names 17 tags; at most 16', param: 'x-sluice-tags' });
    const long = await post('/v1/chat/completions', { ...chat, metadata: { tags: 'a'.repeat(65) } });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ message: 'metadata.tags: a tag must be at most 64 characters', param: 'metadata.tags' });
    const typed = await post('/v1/responses', { model: 'gpt-oss-120b', input: 'Hello', metadata: { tags: 7 } });
    expect(typed.status).toBe(400);
    expect(typed.body.error).toMatchObject({ message: 'metadata.tags must be a comma-separated string or an array of strings', param: 'metadata.tags' });
    const empty = await post('/v1/chat/completions', chat, 'a,,b');
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ message: 'x-sluice-tags has an empty tag', param: 'x-sluice-tags' });
    const together = await post('/v1/chat/completions', { ...chat, metadata: { tags: Array.from({ length: 9 }, (_, i) => `b${i}`) } }, Array.from({ length: 9 }, (_, i) => `h${i}`).join(','));
    expect(together.status).toBe(400);
    expect(together.body.error).toMatchObject({ message: 'x-sluice-tags and metadata.tags name 18 tags together; at most 16', param: 'x-sluice-tags and metadata.tags' });
    const anthropic = await post('/v1/messages', { model: 'gpt-oss-120b', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }, 'é');
    expect(anthropic.status).toBe(400);
    expect(anthropic.body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'x-sluice-tags: a tag may hold only letters, digits and . _ : / = - (got "é")' },
      request_id: expect.any(String),
    });
    expect(await labelsSince(before)).toEqual([]);
  });
});

describe('the Responses WebSocket', () => {
  it("labels each response with the upgrade's x-sluice-tags and the event's metadata.tags and user", async () => {
    const before = (await usageOf(env.server, projectId)).length;
    const socket = await openTestSocket(wsUrlOf(env.server.baseUrl), { headers: { authorization: `Bearer ${key}`, 'x-sluice-tags': 'ide,codex' } });
    try {
      const events = await socket.turn({ type: 'response.create', model: 'gpt-oss-120b', input: 'Hello', metadata: { tags: 'team-c' }, user: 'grace' });
      expect(events.at(-1)!.type).toBe('response.completed');
      const [refused] = await socket.turn({ type: 'response.create', model: 'gpt-oss-120b', input: 'Hello', metadata: { tags: 'bad tag' } });
      expect(refused).toMatchObject({ type: 'error', status: 400, error: { param: 'metadata.tags' } });
    } finally {
      socket.ws.terminate();
    }
    expect(await labelsSince(before)).toEqual([{ route: '/v1/responses', tags: ['ide', 'codex', 'team-c'], endUser: 'grace' }]);
  });
});

describe('end user', () => {
  it("is OpenAI's safety_identifier or user, and Anthropic's metadata.user_id", async () => {
    const before = (await usageOf(env.server, projectId)).length;
    expect((await post('/v1/chat/completions', { ...chat, user: 'alice' })).status).toBe(200);
    expect((await post('/v1/chat/completions', { ...chat, user: 'alice', safety_identifier: 'hash-bob' })).status).toBe(200);
    expect((await post('/v1/responses', { model: 'gpt-oss-120b', input: 'Hello', safety_identifier: 'carol' })).status).toBe(200);
    expect((await post('/v1/responses', { model: 'gpt-oss-120b', input: 'Hello', user: 'dave', stream: true })).status).toBe(200);
    expect((await post('/v1/embeddings', { model: 'all-minilm-l6-v2', input: 'hello', user: 'erin' })).status).toBe(200);
    const messages = { model: 'gpt-oss-120b', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }], metadata: { user_id: 'frank' } };
    expect((await post('/v1/messages', messages)).status).toBe(200);
    expect((await post('/v1/messages', { ...messages, stream: true })).status).toBe(200);
    expect((await labelsSince(before)).map((r) => [r.route, r.endUser])).toEqual([
      ['/v1/chat/completions', 'alice'],
      ['/v1/chat/completions', 'hash-bob'],
      ['/v1/responses', 'carol'],
      ['/v1/responses', 'dave'],
      ['/v1/embeddings', 'erin'],
      ['/v1/messages', 'frank'],
      ['/v1/messages', 'frank'],
    ]);
  });

  it('longer than 512 characters is a 400 naming the field', async () => {
    const res = await post('/v1/chat/completions', { ...chat, user: 'u'.repeat(513) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'user must be at most 512 characters', param: 'user' });
  });
});
