/**
 * A property-based fuzz of the MCP endpoint (fast-check): JSON-RPC messages of every
 * shape (known and unknown methods, ids of any type, `params` right or wrong, tool calls
 * with request-like or random arguments, the 2026-07-28 envelope present, absent or
 * malformed), with or without credentials, Accept and protocol-version headers, and
 * bodies that are not JSON-RPC or not JSON. Every answer must:
 *   - not be a server fault: no 500, and a 5xx only as a tool result for the
 *     upstream/availability codes that describe the environment;
 *   - carry an `x-request-id`;
 *   - if an HTTP error (4xx), be a JSON-RPC error response;
 *   - if a tool result with `isError`, carry a status and the REST envelope, or an x402
 *     PaymentRequired.
 */
import fc from 'fast-check';
import { CATALOG_IDS } from '../../src/config/catalog.js';
import type { FuzzStats, FuzzTarget } from './http-surface.js';

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];
const TOOLS = ['chat', 'embed', 'moderate', 'classify', 'extract', 'transcribe', 'decide', 'batch_create', 'batch_get'];
const METHODS = ['initialize', 'server/discover', 'tools/list', 'tools/call', 'ping', 'notifications/initialized', 'resources/list', 'prompts/get', ...PROTOTYPE_NAMES];
const MODERN = '2026-07-28';

const modelName = fc.oneof(fc.constantFrom(...CATALOG_IDS, ...PROTOTYPE_NAMES), fc.string({ maxLength: 20 }), fc.integer());

const argumentsLike = fc.oneof(
  fc.record(
    {
      model: modelName,
      messages: fc.oneof(fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'robot'), content: fc.string({ maxLength: 30 }) }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })),
      input: fc.oneof(fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })),
      max_tokens: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 4 })),
      state: fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 2 })),
      questions: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.record({ type: fc.constantFrom('noul', 'choice', 'score', 'x'), instructions: fc.string({ maxLength: 20 }) })), fc.jsonValue({ maxDepth: 2 })),
      batch_id: fc.oneof(fc.constantFrom('batch_abc', ...PROTOTYPE_NAMES), fc.string({ maxLength: 20 }), fc.integer()),
      input_file_id: fc.oneof(fc.constantFrom('file-abc'), fc.string({ maxLength: 20 })),
      endpoint: fc.constantFrom('/v1/chat/completions', '/v1/embeddings', ''),
      labels: fc.oneof(fc.array(fc.string({ maxLength: 8 }), { maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })),
      threshold: fc.oneof(fc.double(), fc.string({ maxLength: 4 })),
      schema: fc.oneof(fc.constant({ type: 'object', properties: { name: { type: 'string' } } }), fc.jsonValue({ maxDepth: 2 })),
      metadata: fc.jsonValue({ maxDepth: 2 }),
      audio: fc.oneof(fc.base64String({ maxLength: 64 }), fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 1 })),
      file_id: fc.oneof(fc.constantFrom('file-abc', ...PROTOTYPE_NAMES), fc.string({ maxLength: 20 }), fc.integer()),
      filename: fc.oneof(fc.constantFrom('a.wav', 'a.txt', 'noext'), fc.jsonValue({ maxDepth: 1 })),
      response_format: fc.oneof(fc.constantFrom('json', 'text', 'srt', 'verbose_json', 'vtt', 'xml'), fc.jsonValue({ maxDepth: 1 })),
      timestamp_granularities: fc.oneof(fc.array(fc.constantFrom('word', 'segment', 'x'), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

const envelope = fc.oneof(
  fc.constant(undefined),
  fc.constant({ 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }),
  fc.record(
    {
      'io.modelcontextprotocol/protocolVersion': fc.constantFrom(MODERN, '2025-11-25', '1999-01-01', ''),
      'x402/payment': fc.jsonValue({ maxDepth: 2 }),
      'org.paymentauth/credential': fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

const params = fc.oneof(
  fc.record({ name: fc.oneof(fc.constantFrom(...TOOLS, ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 }), fc.integer()), arguments: argumentsLike, _meta: envelope }, { requiredKeys: [] }),
  fc.record({ protocolVersion: fc.constantFrom(MODERN, '2025-11-25', 'x'), capabilities: fc.jsonValue({ maxDepth: 2 }), clientInfo: fc.jsonValue({ maxDepth: 2 }), _meta: envelope }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 3 }),
);

const message = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '2.0', '2.0', '1.0', 2),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
    method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 })),
    params,
  },
  { requiredKeys: [] },
);

/** A well-formed 2025-era tool call or list, with arguments that may be anything: reaches the tools. */
const wellFormed = fc.record({
  id: fc.integer({ min: 1, max: 1000 }),
  method: fc.constantFrom('tools/call', 'tools/call', 'tools/call', 'tools/list', 'initialize', 'ping'),
  params: fc.record({ name: fc.constantFrom(...TOOLS), arguments: argumentsLike }),
}).map((m) => ({ jsonrpc: '2.0', ...m }));

const body = fc.oneof(
  { weight: 6, arbitrary: wellFormed.map((m) => JSON.stringify(m)) },
  { weight: 4, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"jsonrpc":', 'null', '[]', '"x"', '{"__proto__":{"x":1}}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"constructor":{"prototype":{"x":1}}}}}') },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 2_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)) },
);

interface McpFuzzRequest {
  method: string;
  auth: 'key' | 'none' | 'bad' | 'receipt';
  accept: string | null;
  protocolHeader: string | null;
  contentType: string | null;
  body: string | null;
}

export const mcpRequestArbitrary: fc.Arbitrary<McpFuzzRequest> = fc
  .record({
    method: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT'),
    auth: fc.constantFrom('key', 'key', 'key', 'none', 'none', 'bad', 'receipt'),
    accept: fc.constantFrom(...Array<string | null>(6).fill('application/json, text/event-stream'), 'application/json', 'text/event-stream', '*/*', null),
    protocolHeader: fc.constantFrom(...Array<string | null>(6).fill(null), MODERN, '2025-11-25', 'garbage'),
    contentType: fc.constantFrom(...Array<string | null>(6).fill('application/json'), 'application/json; charset=utf-8', 'text/plain', null),
    body,
  })
  .map((r) => (r.method === 'GET' ? { ...r, contentType: null, body: null } : r));

function headersFor(request: McpFuzzRequest, target: FuzzTarget): Record<string, string> {
  const headers: Record<string, string> = {};
  if (request.auth === 'key') headers.authorization = `Bearer ${target.apiKey}`;
  if (request.auth === 'bad') headers.authorization = 'Bearer sk-sluice-not-a-real-key';
  if (request.auth === 'receipt') headers.authorization = 'Receipt rcpt_AAAAAAAAAAAAAAAAAAAAAA';
  if (request.accept) headers.accept = request.accept;
  if (request.protocolHeader) headers['mcp-protocol-version'] = request.protocolHeader;
  if (request.contentType) headers['content-type'] = request.contentType;
  return headers;
}

const ENVIRONMENT_CODES = new Set(['model_not_available', 'upstream_error', 'upstream_timeout']);

/** The JSON-RPC messages of an answer: a JSON body, or the `data:` lines of an event stream. */
function messagesOf(text: string, contentType: string): unknown[] {
  if (contentType.startsWith('text/event-stream')) {
    return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as unknown);
  }
  if (text === '') return [];
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? parsed : [parsed];
}

const isRpcError = (m: any) => m?.jsonrpc === '2.0' && typeof m.error?.code === 'number' && typeof m.error.message === 'string';

/** What is wrong with a tool result, or null. */
function toolResultProblem(result: any): string | null {
  if (result?.isError !== true) return null;
  const content = result.structuredContent;
  if (content?.x402Version === 2 && Array.isArray(content.accepts)) return null;
  const error = content?.error;
  if (typeof content?.status !== 'number' || typeof error?.message !== 'string' || typeof error.type !== 'string') {
    // The SDK's own refusals of a call it never dispatched (input validation) carry text only.
    return Array.isArray(result.content) && result.content[0]?.type === 'text' ? null : `tool error without the envelope: ${JSON.stringify(result).slice(0, 160)}`;
  }
  if (content.status === 500) return `tool result 500: ${error.message}`;
  if (content.status > 500 && !ENVIRONMENT_CODES.has(error.code)) return `tool result ${content.status}: ${error.code}`;
  return null;
}

export async function checkMcpOne(request: McpFuzzRequest, target: FuzzTarget, stats: FuzzStats): Promise<string | null> {
  const response = await fetch(`${target.baseUrl}/mcp`, { method: request.method, headers: headersFor(request, target), body: request.body ?? undefined });
  const text = await response.text();
  stats.requests++;
  stats.byStatus.set(response.status, (stats.byStatus.get(response.status) ?? 0) + 1);
  if (!/^req_[0-9a-f]{24}$/.test(response.headers.get('x-request-id') ?? '')) return `no x-request-id (status ${response.status})`;
  if (response.status >= 500) return `${response.status}: ${text.slice(0, 160)}`;
  let messages: unknown[];
  try {
    messages = messagesOf(text, response.headers.get('content-type') ?? '');
  } catch {
    return `answer ${response.status} is not JSON-RPC: ${text.slice(0, 120)}`;
  }
  // A 404 of another method (PUT) is the router's envelope, outside the endpoint.
  if (response.status >= 400 && request.method === 'PUT') return null;
  if (response.status >= 400 && !messages.every(isRpcError)) return `error ${response.status} is not a JSON-RPC error: ${text.slice(0, 160)}`;
  for (const m of messages as any[]) {
    const problem = toolResultProblem(m?.result);
    if (problem) return problem;
  }
  return null;
}

export async function fuzzMcpSurface(target: FuzzTarget, options: { numRuns: number; seed?: number }): Promise<FuzzStats> {
  const stats: FuzzStats = { requests: 0, byStatus: new Map() };
  await fc.assert(
    fc.asyncProperty(mcpRequestArbitrary, async (request) => {
      const problem = await checkMcpOne(request, target, stats);
      if (problem) throw new Error(`${request.method} /mcp ${JSON.stringify(request).slice(0, 300)}: ${problem}`);
    }),
    { numRuns: options.numRuns, seed: options.seed },
  );
  return stats;
}
