/**
 * `classify`, `extract` and `transcribe` with the official client of each SDK line, against
 * the in-process random-weight test models (a classifier pack on the MiniLM-shaped backbone,
 * the NLI zero-shot model, both GLiNER models, Whisper) and a fake engine for a chat model's
 * JSON by schema. Each tool answers the model's result as structured content, refuses a
 * bad argument with the REST code, and debits exactly what the same REST call debits, with
 * a usage record that says `mcp/<tool>`.
 */
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { audioDir, makeAudio } from '../../fixtures/audio/generate.js';
import { balanceOf, usageOf } from '../inference/setup.js';
import { EXTRACT_INSTRUCTION } from '../../../src/http/routes/mcp/task-tools.js';

const IAB = 'zlm-v1-iab-classify-edge';
const CHAT = 'gpt-oss-120b';

let upstream: FakeUpstream;
let server: TestServer;
let modelsDir: string;
let audioFiles: string;
let wav: Buffer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  modelsDir = buildTestModels(['all-minilm-l6-v2', 'deberta-v3-small', 'gliner2-base-v1', 'gliner-multi-pii-v1', 'whisper-tiny']);
  const yaml = `models:\n  ${CHAT}: {"backend": "openai", "base_url": "${upstream.baseUrl}", "upstream_model": "openai/gpt-oss-120b"}\n`;
  server = await startTestServer({ yaml, env: { MODELS_DIR: modelsDir } });
  audioFiles = audioDir();
  wav = readFileSync(makeAudio(audioFiles, { name: 'tone.wav', seconds: 2, tone: 440 }));
}, 180_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
  for (const dir of [modelsDir, audioFiles]) if (dir) rmSync(dir, { recursive: true, force: true });
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

async function postAudio(key: string, bytes: Buffer, fields: Record<string, string>) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), 'tone.wav');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const res = await fetch(`${server.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The debit and usage record of one call, made through `run`. */
async function debitOf(projectId: string, run: () => Promise<unknown>) {
  const before = await balanceOf(server, projectId);
  const answer = await run();
  const [record] = await usageOf(server, projectId);
  return { answer, debit: before - (await balanceOf(server, projectId)), record: record! };
}

const text = 'Football scores from the weekend league games.';
const entities = { model: 'gliner2-base-v1', input: 'Ada Lovelace worked with Charles Babbage in London.', labels: ['person', 'city'], threshold: 0.3 };
const personSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

/** Each tool call, and the REST call that must debit the same. */
const PAIRS: Array<[string, string, Record<string, unknown>, (key: string) => Promise<{ status: number; body: any }>]> = [
  ['classify', 'a classifier pack', { model: IAB, input: text }, (key) => call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: IAB, messages: [{ role: 'user', content: text }] } })],
  [
    'classify',
    'zero-shot labels',
    { model: 'deberta-v3-small', input: text, labels: ['sports', 'finance'] },
    (key) => call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'deberta-v3-small', messages: [{ role: 'user', content: text }], categories: ['sports', 'finance'] } }),
  ],
  [
    'extract',
    'GLiNER entities',
    entities,
    (key) =>
      call(server.baseUrl, 'POST', '/v1/chat/completions', {
        key,
        body: { model: entities.model, messages: [{ role: 'user', content: entities.input }], metadata: { labels: entities.labels, threshold: 0.3 } },
      }),
  ],
  [
    'extract',
    "a chat model's JSON by schema",
    { model: CHAT, input: 'My name is Ada.', schema: personSchema, max_tokens: 40 },
    (key) =>
      call(server.baseUrl, 'POST', '/v1/chat/completions', {
        key,
        body: {
          model: CHAT,
          messages: [{ role: 'system', content: EXTRACT_INSTRUCTION }, { role: 'user', content: 'My name is Ada.' }],
          response_format: { type: 'json_schema', json_schema: { name: 'extraction', schema: personSchema, strict: true } },
          max_tokens: 40,
        },
      }),
  ],
  ['transcribe', 'base64 audio', { model: 'whisper-tiny', audio: '', language: 'en' }, (key) => postAudio(key, wav, { model: 'whisper-tiny', language: 'en' })],
];

describe.each(Object.keys(LINES))('%s', (line) => {
  const connect = LINES[line]!;

  it('lists classify, extract and transcribe over the ready models they call, priced in _meta', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const classify = byName.get('classify')!;
    expect(classify.inputSchema.properties.model.enum).toEqual(['deberta-v3-small', 'zlm-v1-iab-classify-edge', 'zlm-v2-iab-classify-edge-enriched', 'zlm-v1-iab-domain-classifier', 'zlm-v1-multi-iab-classify']);
    expect(Object.keys(classify.inputSchema.properties)).toEqual(['model', 'input', 'labels', 'metadata']);
    expect(classify.inputSchema.required).toEqual(['model', 'input']);
    const extract = byName.get('extract')!;
    expect(extract.inputSchema.properties.model.enum).toEqual([CHAT, 'gliner2-base-v1', 'gliner-multi-pii-v1']);
    expect(Object.keys(extract.inputSchema.properties)).toEqual(['model', 'input', 'labels', 'threshold', 'schema', 'metadata', 'max_tokens']);
    const transcribe = byName.get('transcribe')!;
    expect(transcribe.inputSchema.properties.model.enum).toEqual(['whisper-tiny']);
    expect(transcribe.inputSchema.properties.audio).toMatchObject({ type: 'string', contentEncoding: 'base64' });
    expect(transcribe._meta).toEqual({ 'sluice/price': { unit: 'usd_per_million_tokens', models: { 'whisper-tiny': { input: 0.02, output: 0.05 } } } });
    for (const tool of [classify, extract, transcribe]) expect(JSON.stringify(tool.inputSchema)).not.toContain('x-error');
    await client.close();
  });

  it.each(PAIRS)('%s (%s) debits exactly what the REST call debits, recorded as mcp/<tool>', async (tool, _what, args, rest) => {
    const toolArgs = tool === 'transcribe' ? { ...args, audio: wav.toString('base64') } : args;
    upstream.chat({ content: '{"name":"Ada"}' });
    const viaRestTenant = await server.newTenant({ balanceUsd: 5 });
    const viaRest = await debitOf(viaRestTenant.projectId, () => rest(viaRestTenant.key));
    const mcpTenant = await server.newTenant({ balanceUsd: 5 });
    const client = await connect(mcpTenant.key);
    const viaMcp = await debitOf(mcpTenant.projectId, () => client.callTool({ name: tool, arguments: toolArgs }));
    await client.close();
    upstream.reset();

    const restAnswer = viaRest.answer as { status: number; body: any };
    expect(restAnswer.status, JSON.stringify(restAnswer.body)).toBe(200);
    const result = viaMcp.answer as any;
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(viaMcp.debit).toBeGreaterThan(0);
    expect(viaMcp.debit).toBe(viaRest.debit);
    expect(viaMcp.record).toMatchObject({ route: `mcp/${tool}`, model: viaRest.record.model, inputTokens: viaRest.record.inputTokens, costMicros: viaRest.record.costMicros });
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
    if (tool === 'transcribe') {
      expect(result.structuredContent).toEqual({ text: restAnswer.body.text });
    } else {
      // The model's JSON result, parsed: the REST answer's content.
      expect(result.structuredContent).toEqual({
        id: expect.any(String),
        model: args.model,
        result: JSON.parse(restAnswer.body.choices[0].message.content),
        usage: restAnswer.body.usage,
      });
    }
  });

  it('answers entities by label from GLiNER, and the PII shape from the PII model', async () => {
    const tenant = await server.newTenant({ balanceUsd: 5 });
    const client = await connect(tenant.key);
    const ner = await client.callTool({ name: 'extract', arguments: entities });
    expect(Object.keys(ner.structuredContent.result.entities)).toEqual(['person', 'city']);
    const pii = await client.callTool({ name: 'extract', arguments: { model: 'gliner-multi-pii-v1', input: 'Call Jane Doe at 415-555-0134.', metadata: { usecase: 'redact' } } });
    expect(pii.isError, JSON.stringify(pii)).toBeFalsy();
    expect(Object.keys(pii.structuredContent.result)).toEqual(['redacted_text', 'entities', 'entities_by_label']);
    await client.close();
  });

  it.each([
    ['classify', { model: IAB, input: '' }, 400, 'input must be a non-empty string', 'input', 'invalid_request_error'],
    ['classify', { model: 'deberta-v3-small', input: text, labels: 'abcdefghijk'.split('') }, 400, 'At most 10 candidate labels are allowed, got 11', 'labels', 'invalid_request_error'],
    ['classify', { model: CHAT, input: text }, 400, `The model "${CHAT}" is not available to classify: the ready models are deberta-v3-small, zlm-v1-iab-classify-edge, zlm-v2-iab-classify-edge-enriched, zlm-v1-iab-domain-classifier, zlm-v1-multi-iab-classify`, 'model', 'model_not_found'],
    ['classify', { model: 'zlm-v1-iab-domain-classifier', input: `https://example.com/${'news/'.repeat(120)}` }, 400, 'Input exceeds max_tokens (100) for model: zlm-v1-iab-domain-classifier (the input has 123 tokens)', 'input', 'context_length_exceeded'],
    ['extract', { model: CHAT, input: text }, 400, 'schema is required to extract with a chat model: the JSON Schema of the answer', 'schema', 'invalid_request_error'],
    ['extract', { model: 'gliner2-base-v1', input: text, schema: personSchema }, 400, 'schema is for chat models: a GLiNER model takes labels (or metadata.usecase and metadata.schema)', 'schema', 'invalid_request_error'],
    ['extract', { model: 'gliner2-base-v1', input: text, threshold: 2 }, 400, 'threshold must be a number between 0 and 1', 'threshold', 'invalid_request_error'],
    ['transcribe', { model: 'whisper-tiny' }, 400, 'audio is required: the audio file, base64-encoded (or file_id, a file of your project)', 'audio', 'invalid_request_error'],
    ['transcribe', { model: 'whisper-tiny', audio: 'not base64!' }, 400, 'audio must be the audio file, base64-encoded', 'audio', 'invalid_audio'],
    ['transcribe', { model: 'whisper-tiny', audio: 'AAAA', file_id: 'file-x' }, 400, 'Send the audio as audio or as file_id, not both', 'file_id', 'invalid_request_error'],
    ['transcribe', { model: 'whisper-tiny', audio: 'AAAA', language: 'xx' }, 400, 'language must be an ISO-639-1 code such as "en" or "fr", got "xx"', 'language', 'invalid_request_error'],
    ['transcribe', { model: 'whisper-tiny', audio: 'AAAA', filename: 'a.txt' }, 400, 'Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm', 'audio', 'invalid_file_format'],
    ['transcribe', { model: 'whisper-tiny', file_id: 'file-nope' }, 404, 'File file-nope not found', null, 'file_not_found'],
  ])('%s refuses bad arguments (case %#) with the REST status, message and code, and debits nothing', async (tool, args, status, message, param, code) => {
    const tenant = await server.newTenant({ balanceUsd: 5 });
    const client = await connect(tenant.key);
    const before = await balanceOf(server, tenant.projectId);
    const result = await client.callTool({ name: tool, arguments: args });
    await client.close();
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status, error: { message, param, code } });
    expect(result.content).toEqual([{ type: 'text', text: message }]);
    expect(await balanceOf(server, tenant.projectId)).toBe(before);
  });
});

describe('transcribe by file id', () => {
  it("reads the audio from a file of the caller's project, and never from another project's", async () => {
    const owner = await server.newTenant({ balanceUsd: 5 });
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([wav]), 'tone.jsonl');
    const upload = await fetch(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${owner.key}` }, body: form });
    const file = (await upload.json()) as { id: string };
    const client = await LINES['client 2.x on 2026-07-28']!(owner.key);
    const own = await client.callTool({ name: 'transcribe', arguments: { model: 'whisper-tiny', file_id: file.id, filename: 'tone.wav', response_format: 'text' } });
    await client.close();
    expect(own.isError, JSON.stringify(own)).toBeFalsy();
    expect(own.structuredContent).toEqual({ text: expect.any(String) });

    const stranger = await server.newTenant({ balanceUsd: 5 });
    const theirs = await (await LINES['sdk 1.x on 2025-11-25']!(stranger.key)).callTool({ name: 'transcribe', arguments: { model: 'whisper-tiny', file_id: file.id } });
    expect(theirs.structuredContent).toMatchObject({ status: 404, error: { code: 'file_not_found' } });
  });
});
