/**
 * `/mcp` with the official client of each SDK line, against a fake engine on loopback:
 * `@modelcontextprotocol/client` 2.x pinned to the 2026-07-28 revision (`server/discover`,
 * stateless) and `@modelcontextprotocol/sdk` 1.x on 2025-11-25 (`initialize`). Each lists
 * the tools anonymously (prices in `_meta`), calls `chat`, `embed` and `decide` with an API
 * key, and its project is debited exactly what the same REST call debits, with usage
 * records that say `mcp/<tool>`. A tool call without a credential is refused as a tool
 * result; a project key never sees another project's batch.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { balanceOf, usageOf } from '../inference/setup.js';

const IAB = 'zlm-v1-iab-classify-edge';
const CHAT = 'gpt-oss-120b';
const EMBED = 'bge-small-en-v1.5';

let upstream: FakeUpstream;
let server: TestServer;
let modelsDir: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  modelsDir = buildTestModels(['all-minilm-l6-v2']);
  const yaml =
    'models:\n' +
    `  ${CHAT}: {"backend": "openai", "base_url": "${upstream.baseUrl}", "upstream_model": "openai/gpt-oss-120b"}\n` +
    `  ${EMBED}: {"backend": "openai", "base_url": "${upstream.baseUrl}"}\n`;
  server = await startTestServer({ yaml, env: { MODELS_DIR: modelsDir, DECISION_DEFAULT_MODEL: IAB } });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
  if (modelsDir) rmSync(modelsDir, { recursive: true, force: true });
});

interface ToolCaller {
  listTools(): Promise<{ tools: Array<{ name: string; inputSchema: any; _meta?: Record<string, unknown> }> }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<any>;
  close(): Promise<void>;
}

const endpoint = () => new URL(`${server.baseUrl}/mcp`);
const headersOf = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

const LINES: Record<string, (key?: string) => Promise<ToolCaller>> = {
  'client 2.x on 2026-07-28': async (key) => {
    const client = new ModernClient({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ModernTransport(endpoint(), { requestInit: { headers: headersOf(key) } }));
    return client as unknown as ToolCaller;
  },
  'sdk 1.x on 2025-11-25': async (key) => {
    const client = new LegacyClient({ name: 'test', version: '1.0.0' });
    await client.connect(new LegacyTransport(endpoint(), { requestInit: { headers: headersOf(key) } }));
    return client as unknown as ToolCaller;
  },
};

const hello = { model: CHAT, messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50 };
const embedding = { model: EMBED, input: ['one text', 'another text'] };
const decision = { model: IAB, state: 'The new electric sedan has a longer range.', questions: { cars: { type: 'noul', instructions: 'Is it about cars?' } } };

/** The debit and usage record of one call, made through `run`. */
async function debitOf(projectId: string, run: () => Promise<unknown>) {
  const before = await balanceOf(server, projectId);
  const answer = await run();
  const [record] = await usageOf(server, projectId);
  return { answer, debit: before - (await balanceOf(server, projectId)), record: record! };
}

describe.each(Object.keys(LINES))('%s', (line) => {
  const connect = LINES[line]!;

  it('lists the tools with no credential: ready models as an enum, prices in _meta', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['chat', 'embed', 'decide', 'batch_create', 'batch_get']));
    const chat = byName.get('chat')!;
    // Every ready model served on /v1/chat/completions (the classifier packs answer there too), nothing else.
    expect(chat.inputSchema.properties.model.enum).toContain(CHAT);
    expect(chat.inputSchema.properties.model.enum).not.toContain(EMBED);
    expect(Object.keys(chat.inputSchema.properties)).toEqual(['model', 'messages', 'max_tokens', 'temperature', 'response_format']);
    expect(chat.inputSchema.required).toEqual(['model', 'messages']);
    expect(JSON.stringify(chat.inputSchema)).not.toContain('x-error');
    expect(chat._meta).toEqual({ 'sluice/price': { unit: 'usd_per_million_tokens', models: expect.objectContaining({ [CHAT]: { input: 0.15, output: 0.6 } }) } });
    expect(Object.keys((chat._meta!['sluice/price'] as any).models)).toEqual(chat.inputSchema.properties.model.enum);
    // The embeddings models that are ready: the one on the fake engine and the in-process one under MODELS_DIR.
    expect(byName.get('embed')!.inputSchema.properties.model.enum).toEqual(['all-minilm-l6-v2', EMBED]);
    expect(byName.get('decide')!.inputSchema.properties.model.enum).toContain(IAB);
    expect(byName.get('batch_get')!._meta).toEqual({ 'sluice/price': { unit: 'usd_per_call', amount: 0 } });
    await client.close();
  });

  it('refuses a tool call with no credential as a tool result naming what is needed, and calls nothing', async () => {
    const client = await connect();
    upstream.reset();
    const result = await client.callTool({ name: 'chat', arguments: hello });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      status: 401,
      error: {
        message: 'This tool call needs a credential: an API key as "Authorization: Bearer <API key>" or "x-api-key: <API key>"',
        type: 'authentication_error',
        code: 'missing_api_key',
        param: null,
      },
    });
    expect(result.content).toEqual([{ type: 'text', text: result.structuredContent.error.message }]);
    expect(upstream.count()).toBe(0);
    await client.close();
  });

  it.each([
    ['chat', '/v1/chat/completions', hello],
    ['embed', '/v1/embeddings', embedding],
    ['decide', '/v1/systemone', decision],
  ])('%s debits exactly what %s debits, recorded as mcp/<tool>', async (tool, path, args) => {
    const rest = await server.newTenant({ balanceUsd: 5 });
    const viaRest = await debitOf(rest.projectId, async () => (await call(server.baseUrl, 'POST', path, { key: rest.key, body: args })).body);
    const mcp = await server.newTenant({ balanceUsd: 5 });
    const client = await connect(mcp.key);
    const viaMcp = await debitOf(mcp.projectId, () => client.callTool({ name: tool, arguments: args }));
    await client.close();

    const result = viaMcp.answer as any;
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(viaMcp.debit).toBeGreaterThan(0);
    expect(viaMcp.debit).toBe(viaRest.debit);
    expect(viaMcp.record).toMatchObject({
      route: `mcp/${tool}`,
      model: viaRest.record.model,
      keyId: mcp.keyId,
      inputTokens: viaRest.record.inputTokens,
      outputTokens: viaRest.record.outputTokens,
      costMicros: viaRest.record.costMicros,
    });
    // The answer is the REST answer, as structured content and as its JSON text.
    const { id: _id, created: _created, ...same } = result.structuredContent;
    const { id: _rid, created: _rcreated, ...restSame } = viaRest.answer as Record<string, unknown>;
    expect(same).toEqual(restSame);
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  });

  it('answers a refused argument with the REST code and message, and debits nothing', async () => {
    const tenant = await server.newTenant({ balanceUsd: 5 });
    const rest = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: { model: CHAT, messages: [] } });
    const client = await connect(tenant.key);
    const before = await balanceOf(server, tenant.projectId);
    const result = await client.callTool({ name: 'chat', arguments: { model: CHAT, messages: [] } });
    await client.close();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ status: rest.status, ...rest.body });
    expect(await balanceOf(server, tenant.projectId)).toBe(before);
  });

  it("answers decide with no credit left as /v1/systemone does (its own 402)", async () => {
    const tenant = await server.newTenant({ balanceUsd: 0 });
    const rest = await call(server.baseUrl, 'POST', '/v1/systemone', { key: tenant.key, body: decision });
    expect(rest.status).toBe(402);
    const client = await connect(tenant.key);
    const result = await client.callTool({ name: 'decide', arguments: decision });
    await client.close();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ status: 402, ...rest.body });
  });

  it("never shows a project another project's batch through batch_get", async () => {
    const owner = await server.newTenant();
    const upload = await fetch(`${server.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}` },
      body: (() => {
        const form = new FormData();
        form.append('purpose', 'batch');
        const line = { custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: hello };
        form.append('file', new Blob([`${JSON.stringify(line)}\n`]), 'in.jsonl');
        return form;
      })(),
    });
    const file = (await upload.json()) as { id: string };
    const ownerClient = await connect(owner.key);
    const created = await ownerClient.callTool({ name: 'batch_create', arguments: { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(created.isError, JSON.stringify(created)).toBeFalsy();
    const batchId: string = created.structuredContent.id;
    const own = await ownerClient.callTool({ name: 'batch_get', arguments: { batch_id: batchId } });
    expect(own.structuredContent).toMatchObject({ id: batchId, object: 'batch', input_file_id: file.id });
    await ownerClient.close();

    const stranger = await server.newTenant();
    const strangerClient = await connect(stranger.key);
    const theirs = await strangerClient.callTool({ name: 'batch_get', arguments: { batch_id: batchId } });
    await strangerClient.close();
    const rest = await call(server.baseUrl, 'GET', `/v1/batches/${batchId}`, { key: stranger.key });
    expect(rest.status).toBe(404);
    expect(theirs.isError).toBe(true);
    expect(theirs.structuredContent).toEqual({ status: 404, ...rest.body });
  });
});
