/**
 * The served OpenAPI document as a client generator meets it: openapi-typescript turns it
 * into types, and a small program written against those types (create a chat completion,
 * read an error's code) typechecks under strict TypeScript, refuses a wrong request, and
 * runs against the server: a completion through a declared model, then an error's code.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { tempDir } from '../../helpers/databases.js';
import { REPO } from '../../helpers/cli.js';

const PROGRAM = `
import type { components, paths } from './api.js';

type Create = paths['/v1/chat/completions']['post'];
type ChatRequest = Create['requestBody']['content']['application/json'];
type ChatCompletion = Create['responses'][200]['content']['application/json'];
type ApiError = components['schemas']['Error'];

// Every error status of the route is the one shared envelope.
const unavailable: ApiError = {} as Create['responses'][503]['content']['application/json'];
const unauthorized: ApiError = {} as Create['responses'][401]['content']['application/json'];
const chunk: components['schemas']['ChatCompletionChunk']['object'] = 'chat.completion.chunk';

// @ts-expect-error: model is a string, and messages are required
const wrong: ChatRequest = { model: 42 };

export async function createChatCompletion(baseUrl: string, key: string, request: ChatRequest): Promise<string> {
  const response = await fetch(baseUrl + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (!response.ok) {
    const failure = (await response.json()) as ApiError;
    const code: string | null = failure.error.code;
    return 'error ' + response.status + ' ' + code;
  }
  const completion = (await response.json()) as ChatCompletion;
  const usage: components['schemas']['Usage'] = completion.usage;
  return completion.choices[0]!.message.content + ' (' + usage.total_tokens + ' tokens)';
}

const [baseUrl, key] = process.argv.slice(2) as [string, string];
console.log(await createChatCompletion(baseUrl, key, { model: 'my-own-model', messages: [{ role: 'user', content: 'Hello' }] }));
console.log(await createChatCompletion(baseUrl, key, { model: 'no-such-model', messages: [{ role: 'user', content: 'Hello' }] }));
void [unavailable, unauthorized, chunk, wrong];
`;

describe('a TypeScript client generated from GET /v1/openapi.json', { timeout: 120_000 }, () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let key: string;
  const dir = tempDir('sluice-openapi-client-');

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    server = await startTestServer({ yaml: `models:\n  my-own-model:\n    base_url: ${upstream.baseUrl}\n` });
    ({ key } = await server.newTenant());
    const document = (await call(server.baseUrl, 'GET', '/v1/openapi.json')).body;
    writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(document)));
    writeFileSync(path.join(dir, 'client.ts'), PROGRAM);
    writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}');
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  it('typechecks under strict TypeScript, the wrong request refused', () => {
    const program = ts.createProgram([path.join(dir, 'client.ts')], {
      strict: true,
      noEmit: true,
      noUnusedLocals: false,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [path.join(REPO, 'node_modules/@types')],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });

  it('creates a chat completion and reads an error’s code', async () => {
    // Not spawnSync: the server answering the program runs in this process.
    const child = spawn(path.join(REPO, 'node_modules/.bin/tsx'), [path.join(dir, 'client.ts'), server.baseUrl, key], { cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe('Hello from the fake upstream. (18 tokens)\nerror 400 model_not_found\n');
  });
});

describe('the document a generator reads', () => {
  let server: TestServer;
  let document: {
    paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { description: string; content?: Record<string, { schema: Record<string, unknown> }> }> }>>;
    components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  };

  beforeAll(async () => {
    server = await startTestServer();
    document = (await call(server.baseUrl, 'GET', '/v1/openapi.json')).body;
  });
  afterAll(() => server.close());

  const operations = () => Object.entries(document.paths).flatMap(([p, ops]) => Object.entries(ops).map(([m, op]) => ({ name: `${m.toUpperCase()} ${p}`, op })));
  const ERROR_REF = { $ref: '#/components/schemas/Error' };

  it('names the shared objects once, and every $ref resolves', () => {
    expect(Object.keys(document.components.schemas).sort()).toEqual(['Batch', 'ChatCompletion', 'ChatCompletionChunk', 'Error', 'File', 'Response', 'ResponseStreamEvent', 'Usage']);
    const refs = JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const ref of new Set(refs)) expect(document.components.schemas).toHaveProperty(ref.split('/').pop()!);
    expect(document.paths['/v1/files/{file_id}']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/File' });
    expect(document.paths['/v1/responses']!.post!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Response' });
    expect(document.paths['/v1/responses']!.post!.responses['200']!.content!['text/event-stream']!.schema).toEqual({
      type: 'string',
      description: 'server-sent events, each `event: <type>` and `data: <ResponseStreamEvent JSON>`, numbered by `sequence_number`; no `[DONE]`',
      'x-event': { $ref: '#/components/schemas/ResponseStreamEvent' },
    });
    expect(document.paths['/v1/batches/{batch_id}']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Batch' });
    expect(JSON.stringify(document.components.schemas.ChatCompletion)).toContain('"usage":{"$ref":"#/components/schemas/Usage"}');
  });

  it("describes every error status of every route with the shared envelope (Anthropic's on the Messages routes)", () => {
    for (const { name, op } of operations()) {
      const errors = Object.entries(op.responses).filter(([status]) => Number(status) >= 400);
      expect(errors.map(([status]) => status), name).toContain('500');
      for (const [status, response] of errors) {
        if (name === 'POST /v1/systemone' && status === '422') continue; // FastAPI's {detail: [...]}, as System One clients expect
        // Anthropic's Messages routes answer in Anthropic's envelope.
        if (/\/messages(\/count_tokens)?$/.test(name)) expect(response.content!['application/json']!.schema, `${name} ${status}`).toMatchObject({ title: 'AnthropicError' });
        else expect(response.content!['application/json']!.schema, `${name} ${status}`).toEqual(ERROR_REF);
        expect(response.description.length, `${name} ${status}`).toBeGreaterThan(10);
      }
    }
  });

  it('lists the statuses each kind of route answers', () => {
    const statuses = (p: string, m: string) => Object.keys(document.paths[p]![m]!.responses);
    expect(statuses('/v1/chat/completions', 'post')).toEqual(['200', '400', '401', '403', '404', '409', '413', '422', '429', '500', '502', '503']);
    // 400: a bad page of Anthropic's shape (limit, after_id, before_id).
    expect(statuses('/v1/models', 'get')).toEqual(['200', '400', '401', '403', '429', '500']);
    expect(statuses('/v1/batches/{batch_id}/cancel', 'post')).toEqual(['200', '400', '401', '403', '404', '409', '429', '500']);
    // The decision route's own statuses: 402 for credit, 401 for a bad key, FastAPI's 422.
    expect(statuses('/v1/systemone', 'post')).toEqual(['200', '400', '401', '402', '404', '413', '422', '429', '500', '502', '503']);
  });

  it('describes a stream as text/event-stream of ChatCompletionChunk events', () => {
    const ok = document.paths['/v1/chat/completions']!.post!.responses['200']!;
    expect(Object.keys(ok.content!)).toEqual(['application/json', 'text/event-stream']);
    expect(ok.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ChatCompletion' });
    expect(ok.content!['text/event-stream']!.schema).toMatchObject({ type: 'string', 'x-event': { $ref: '#/components/schemas/ChatCompletionChunk' } });
  });

  it('offers both ways to send an API key on every /v1 route, the admin token on /admin/v1 and the signature on /gateway/v1', () => {
    expect(document.components.securitySchemes).toEqual({
      ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      BearerApiKey: { type: 'http', scheme: 'bearer', description: 'An API key as a bearer token' },
      AdminToken: { type: 'http', scheme: 'bearer', description: 'The operator token, SLUICE_ADMIN_TOKEN' },
      GatewaySignature: { type: 'apiKey', in: 'header', name: 'gw-signature', description: 'HMAC-SHA256 of the request, see README "Gateway"' },
    });
    for (const { name, op } of operations()) {
      const expected = name.includes(' /admin/v1/')
        ? [{ AdminToken: [] }]
        : name.includes(' /gateway/v1/')
          ? [{ GatewaySignature: [] }]
          : [{ ApiKey: [] }, { BearerApiKey: [] }];
      expect(op.security, name).toEqual(expected);
    }
    // The admin API is a scope like /v1 (the admin token as its strategy), rate-limited per operator.
    expect(Object.keys(document.paths['/admin/v1/projects']!.post!.responses)).toEqual(['200', '400', '401', '403', '413', '429', '500']);
  });
});
