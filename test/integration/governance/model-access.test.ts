/**
 * A key limited to some models reaches no other: not directly, not by an alias, on no
 * route (chat, responses, completions, embeddings, Anthropic's messages), not in a batch
 * line, an MCP tool call or the Responses WebSocket. Each refusal is the wire's own "model
 * not found", and the engine never hears of the call. `GET /v1/models` lists only what the
 * key may reach. Driven by the official SDKs against a fake engine on loopback.
 */
import { createReadStream, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { openTestSocket, wsUrlOf } from '../../helpers/responses-socket.js';
import { inferenceYaml } from '../inference/setup.js';
import { jsonl } from '../batches/support/batch-helpers.js';

const ALLOWED = 'qwen3-30b-a3b-fp8';
const DENIED = 'gpt-oss-120b';
const EMBED = 'bge-small-en-v1.5';
/** `small-fast` stands for an allowed model; `small-big` for a denied one; `cheap` is an alias the key does not list. */
const ALIASES = `aliases:\n  small-fast: ${ALLOWED}\n  small-big: ${DENIED}\n  cheap: ${ALLOWED}\n`;
const POLICY = ['qwen3-*', 'small-*'];

let upstream: FakeUpstream;
let server: TestServer;
let key: string;
let client: OpenAI;

const notFoundMessage = (name: string) => `The model \`${name}\` does not exist or you do not have access to it.`;
const openAiNotFound = (name: string) => ({ error: { message: notFoundMessage(name), type: 'invalid_request_error', code: 'model_not_found', param: 'model' } });
const engineHeard = () => upstream.requests.map((r) => r.body?.model as string | undefined).filter((m) => m !== undefined);

beforeAll(async () => {
  upstream = await startFakeUpstream();
  const yaml = `${inferenceYaml(upstream.baseUrl)}${ALIASES}batches:\n  retry_base_ms: 20\n  lease_seconds: 2\n`;
  server = await startTestServer({ yaml, startWorkers: true });
  const tenant = await server.newTenant({ balanceUsd: 5 });
  const created = await call(server.baseUrl, 'POST', `/admin/v1/projects/${tenant.projectId}/keys`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { name: 'small only', models: POLICY },
  });
  key = created.body.key;
  client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

const hello = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'Hello' }], max_tokens: 20 });

describe('a key limited to qwen3-* and small-*', () => {
  it('chat: the allowed model and an allowed alias answer; another model, an alias to it and an unlisted alias are 404 model_not_found', async () => {
    expect((await client.chat.completions.create(hello(ALLOWED))).model).toBe(ALLOWED);
    expect((await client.chat.completions.create(hello('small-fast'))).model).toBe('small-fast');
    for (const name of [DENIED, 'small-big', 'cheap', 'GPT-OSS-120B']) {
      const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: hello(name) });
      expect([name, res.status]).toEqual([name, 404]);
      expect(res.body).toEqual(openAiNotFound(name));
      const streamed = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { ...hello(name), stream: true } });
      expect([name, streamed.status, streamed.body]).toEqual([name, 404, openAiNotFound(name)]);
    }
    expect(engineHeard()).toEqual([ALLOWED, ALLOWED]);
  });

  it('the SDK sees a NotFoundError', async () => {
    const error = await client.chat.completions.create(hello(DENIED)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('responses, completions and embeddings refuse the same way', async () => {
    const responses = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: DENIED, input: 'hi' } });
    expect([responses.status, responses.body.error.code, responses.body.error.message]).toEqual([404, 'model_not_found', notFoundMessage(DENIED)]);
    const viaAlias = await call(server.baseUrl, 'POST', '/v1/responses', { key, body: { model: 'small-big', input: 'hi' } });
    expect([viaAlias.status, viaAlias.body.error.code]).toEqual([404, 'model_not_found']);
    const completions = await call(server.baseUrl, 'POST', '/v1/completions', { key, body: { model: DENIED, prompt: 'hi', max_tokens: 5 } });
    expect([completions.status, completions.body]).toEqual([404, openAiNotFound(DENIED)]);
    const embeddings = await call(server.baseUrl, 'POST', '/v1/embeddings', { key, body: { model: EMBED, input: 'hi' } });
    expect([embeddings.status, embeddings.body]).toEqual([404, openAiNotFound(EMBED)]);
    expect(engineHeard()).toEqual([]);
  });

  it("Anthropic's messages answer 404 not_found_error", async () => {
    const headers = { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
    const body = { model: 'small-big', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] };
    const res = await call(server.baseUrl, 'POST', '/v1/messages', { headers, body });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: notFoundMessage('small-big') } });
    const ok = await call(server.baseUrl, 'POST', '/v1/messages', { headers, body: { ...body, model: 'small-fast' } });
    expect(ok.status).toBe(200);
  });

  it('GET /v1/models lists only the allowed models, in either shape; a retrieve of another is 404', async () => {
    const list = await call(server.baseUrl, 'GET', '/v1/models', { key });
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([ALLOWED]);
    expect(list.body.models.map((m: { name: string }) => m.name)).toEqual([ALLOWED]);
    const anthropic = await call(server.baseUrl, 'GET', '/v1/models?limit=100', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
    expect(anthropic.body.data.map((m: { id: string }) => m.id).sort()).toEqual([ALLOWED, 'small-fast'].sort());
    const denied = await call(server.baseUrl, 'GET', `/v1/models/${DENIED}`, { key });
    expect([denied.status, denied.body.error.code]).toEqual([404, 'model_not_found']);
    expect((await call(server.baseUrl, 'GET', '/v1/models/small-big', { key })).status).toBe(404);
    expect((await call(server.baseUrl, 'GET', '/v1/models/small-fast', { key })).body.id).toBe('small-fast');
    const unlimited = await call(server.baseUrl, 'GET', '/v1/models', { key: (await server.newTenant()).key });
    expect(unlimited.body.data.map((m: { id: string }) => m.id)).toContain(DENIED);
  });

  it('a batch runs the allowed lines and fails the others with model_not_found', async () => {
    const lines = [ALLOWED, DENIED, 'small-big', 'small-fast'].map((model, i) => ({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: hello(model) }));
    const input = path.join(server.dataDir, 'access.jsonl');
    writeFileSync(input, jsonl(lines));
    const file = await client.files.create({ file: createReadStream(input), purpose: 'batch' });
    let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const deadline = Date.now() + 60_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      batch = await client.batches.retrieve(batch.id);
    }
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 4, completed: 2, failed: 2 } });
    const errors = (await (await client.files.content(batch.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    // As for a model that does not exist: the error file's missing resource.
    expect(errors.map((e) => [e.custom_id, e.error.code, e.error.message])).toEqual([
      ['line-1', 'not_found_error', `[legacy:http_404] ${notFoundMessage(DENIED)}`],
      ['line-2', 'not_found_error', `[legacy:http_404] ${notFoundMessage('small-big')}`],
    ]);
    expect(engineHeard().every((m) => !m.includes('gpt-oss'))).toBe(true);
  });

  it('an MCP tool call answers as the REST route does', async () => {
    const mcp = new McpClient({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    const result = (await mcp.callTool({ name: 'chat', arguments: hello(DENIED) })) as { isError?: boolean; structuredContent?: unknown };
    await mcp.close();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ status: 404, ...openAiNotFound(DENIED) });
    expect(engineHeard()).toEqual([]);
  });

  it('the Responses WebSocket answers an error event for each refused turn and stays open', async () => {
    const socket = await openTestSocket(wsUrlOf(server.baseUrl), { headers: { authorization: `Bearer ${key}` } });
    const [refused] = await socket.turn({ type: 'response.create', model: 'small-big', input: 'hi' });
    expect(refused).toMatchObject({ type: 'error', status: 404, error: { code: 'model_not_found', message: notFoundMessage('small-big') } });
    const [again] = await socket.turn({ type: 'response.create', model: DENIED, input: 'hi' });
    expect(again).toMatchObject({ type: 'error', status: 404, error: { code: 'model_not_found', message: notFoundMessage(DENIED) } });
    await socket.close();
    expect(engineHeard()).toEqual([]);
  });
});
