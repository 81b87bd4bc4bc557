/**
 * GET /v1/models and /v1/models/{id} in Anthropic's shape for Anthropic clients (the
 * official `@anthropic-ai/sdk`, which sends `anthropic-version`), and unchanged in
 * OpenAI's for everyone else (the `openai` SDK, plain `x-api-key` clients).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/harness.js';
import { startInferenceEnv, type InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let key: string;
let anthropic: Anthropic;

const CREATED_AT = '2026-01-01T00:00:00Z';

beforeAll(async () => {
  env = await startInferenceEnv({
    extra: { 'gpt-oss-120b': { upstream_model: 'openai/gpt-oss-120b', aliases: ['claude-sonnet-4-6'] } },
    yamlTail: 'aliases:\n  claude-*haiku*: qwen3-30b-a3b-fp8\n  claude-opus-*: gpt-oss-120b\n',
  });
  key = (await env.server.newTenant()).key;
  anthropic = new Anthropic({ baseURL: env.server.baseUrl, authToken: key, apiKey: null, maxRetries: 0 });
});
afterAll(async () => env.close());

/** The chat models, in registry order: what the list holds after the aliases. */
const chatModelIds = () =>
  env.server.core.registry
    .list()
    .filter((m) => m.entry.routes.includes('chat'))
    .map((m) => m.id);

const ALIAS_ENTRIES = [
  { id: 'claude-sonnet-4-6', display_name: 'claude-sonnet-4-6 (served by gpt-oss-120b)' },
  { id: 'claude-haiku-5-5', display_name: 'claude-haiku-5-5 (served by qwen3-30b-a3b-fp8)' },
  { id: 'claude-haiku-4-5', display_name: 'claude-haiku-4-5 (served by qwen3-30b-a3b-fp8)' },
  { id: 'claude-opus-5-5', display_name: 'claude-opus-5-5 (served by gpt-oss-120b)' },
  { id: 'claude-opus-5', display_name: 'claude-opus-5 (served by gpt-oss-120b)' },
  { id: 'claude-opus-4-8', display_name: 'claude-opus-4-8 (served by gpt-oss-120b)' },
  { id: 'claude-opus-4-7', display_name: 'claude-opus-4-7 (served by gpt-oss-120b)' },
  { id: 'claude-opus-4-6', display_name: 'claude-opus-4-6 (served by gpt-oss-120b)' },
];

describe('Anthropic SDK', () => {
  it('models.list: the aliases first (exact, then Claude Code names the globs match), then every chat model, page after page', async () => {
    const seen: Anthropic.ModelInfo[] = [];
    for await (const model of anthropic.models.list({ limit: 3 })) seen.push(model);
    expect(seen.map((m) => m.id)).toEqual([...ALIAS_ENTRIES.map((a) => a.id), ...chatModelIds()]);
    expect(seen[0]).toEqual({ type: 'model', ...ALIAS_ENTRIES[0], created_at: CREATED_AT, max_input_tokens: 131072 });
    const own = seen.find((m) => m.id === 'qwen3-30b-a3b-fp8')!;
    expect(own).toMatchObject({ type: 'model', display_name: 'qwen3-30b-a3b-fp8', created_at: CREATED_AT });
  });

  it('models.list: one page with its cursors', async () => {
    const page = await anthropic.models.list({ limit: 2 });
    expect(page.data.map((m) => m.id)).toEqual(['claude-sonnet-4-6', 'claude-haiku-5-5']);
    expect(page.has_more).toBe(true);
    expect(page.first_id).toBe('claude-sonnet-4-6');
    expect(page.last_id).toBe('claude-haiku-5-5');
  });

  it('models.retrieve by alias, by glob match and by id', async () => {
    expect(await anthropic.models.retrieve('claude-sonnet-4-6')).toEqual({
      type: 'model',
      id: 'claude-sonnet-4-6',
      display_name: 'claude-sonnet-4-6 (served by gpt-oss-120b)',
      created_at: CREATED_AT,
      max_input_tokens: 131072,
    });
    expect((await anthropic.models.retrieve('claude-3-5-haiku-20241022')).display_name).toBe('claude-3-5-haiku-20241022 (served by qwen3-30b-a3b-fp8)');
    expect((await anthropic.models.retrieve('gpt-oss-120b')).display_name).toBe('gpt-oss-120b');
  });

  it('models.retrieve of an unknown id: NotFoundError in Anthropic’s envelope', async () => {
    const error = await anthropic.models.retrieve('claude-sonnet-3').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    const body = (error as InstanceType<typeof Anthropic.NotFoundError>).error as Record<string, unknown>;
    expect(body.type).toBe('error');
    expect(body.error).toEqual({ type: 'not_found_error', message: 'model: claude-sonnet-3 does not exist' });
    expect(body.request_id).toMatch(/^req_/);
  });
});

const get = (path: string, headers: Record<string, string>) => call(env.server.baseUrl, 'GET', path, { headers });

describe('the shape rule and the cursors (plain HTTP)', () => {
  it('anthropic-version decides, with either key header; x-api-key alone keeps OpenAI’s shape', async () => {
    const byKey = await get('/v1/models?limit=1', { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
    expect(byKey.body).toEqual({ data: [expect.objectContaining({ id: 'claude-sonnet-4-6' })], has_more: true, first_id: 'claude-sonnet-4-6', last_id: 'claude-sonnet-4-6' });
    const byBearer = await get('/v1/models?limit=1', { authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' });
    expect(byBearer.body).toEqual(byKey.body);
    const plain = await get('/v1/models?limit=1', { 'x-api-key': key });
    expect(plain.body.object).toBe('list');
  });

  it('after_id and before_id page forwards and backwards', async () => {
    const headers = { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
    const next = await get('/v1/models?limit=2&after_id=claude-haiku-5-5', headers);
    expect(next.body).toMatchObject({ first_id: 'claude-haiku-4-5', last_id: 'claude-opus-5-5', has_more: true });
    const previous = await get('/v1/models?limit=2&before_id=claude-opus-5-5', headers);
    expect(previous.body).toMatchObject({ first_id: 'claude-haiku-5-5', last_id: 'claude-haiku-4-5', has_more: true });
    const first = await get('/v1/models?limit=5&before_id=claude-haiku-5-5', headers);
    expect(first.body).toMatchObject({ first_id: 'claude-sonnet-4-6', last_id: 'claude-sonnet-4-6', has_more: false });
  });

  it.each([
    ['/v1/models?limit=0', 'limit: must be an integer from 1 to 1000'],
    ['/v1/models?limit=abc', 'limit: must be an integer from 1 to 1000'],
    ['/v1/models?limit=1001', 'limit: must be an integer from 1 to 1000'],
    ['/v1/models?after_id=nope', 'after_id: no model with id nope'],
    ['/v1/models?after_id=gpt-oss-120b&before_id=gpt-oss-120b', 'after_id and before_id: give at most one'],
  ])('%s → 400 in Anthropic’s envelope', async (path, message) => {
    const res = await get(path, { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: expect.stringMatching(/^req_/) });
  });
});

describe('OpenAI clients', () => {
  it('openai SDK: the list is as before, models only, no aliases', async () => {
    const client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(env.server.core.registry.list().map((m) => m.id));
    const raw = await get('/v1/models', { authorization: `Bearer ${key}` });
    expect(Object.keys(raw.body)).toEqual(['object', 'data', 'models']);
    expect(raw.body.data[0]).toEqual({ id: 'gpt-oss-120b', object: 'model', created: 1767225600, owned_by: 'sluice' });
  });

  it('openai SDK: an unknown id is OpenAI’s 404', async () => {
    const client = new OpenAI({ baseURL: `${env.server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const error = await client.models.retrieve('claude-sonnet-3').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });
});
