/**
 * A property-based fuzz of the HTTP surface (fast-check): random methods, paths over
 * every route with hostile segments (prototype names, long, unicode, traversal), query
 * strings, credentials, content types and bodies (JSON of any shape, near-valid request
 * bodies, invalid JSON). Every answer must:
 *   - not be a server fault: no 500, and a 5xx only for the upstream/availability codes
 *     that describe the environment (the fuzz binds every model to a fake upstream);
 *   - carry an `x-request-id`;
 *   - if an error, be the spec's envelope `{error: {message, type, code, param}}`, or on
 *     Anthropic's Messages routes Anthropic's `{type: "error", error: {type, message},
 *     request_id}`, whose 5xx are only the engine's (529, 504) or availability's (503).
 * The suite runs a bounded number of requests; `npm run fuzz` runs a longer one.
 */
import fc from 'fast-check';
import { CATALOG_IDS } from '../../src/config/catalog.js';

export interface FuzzTarget {
  baseUrl: string;
  apiKey: string;
  adminToken: string;
}

export interface FuzzStats {
  requests: number;
  byStatus: Map<number, number>;
}

interface FuzzRequest {
  method: string;
  path: string;
  auth: 'key' | 'admin' | 'none' | 'bad' | 'bare';
  contentType: string | null;
  body: string | null;
  /** An `x-sluice-tags` header, when sent. */
  tags?: string;
}

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];

const segment = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES, ...CATALOG_IDS, '..', '%2e%2e', '%00', '%', 'file-abc', 'batch_abc', '00000000-0000-4000-8000-000000000000'),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
  fc.constant('x'.repeat(300)),
);

const ROUTES: Array<(s: string) => string> = [
  () => '/v1/chat/completions',
  () => '/v1/completions',
  () => '/v1/responses',
  () => '/v1/messages',
  () => '/v1/messages?beta=true',
  () => '/v1/messages/count_tokens',
  (s) => `/v1/messages/${s}`,
  () => '/v1/embeddings',
  () => '/v1/moderations',
  () => '/v1/models',
  (s) => `/v1/models/${s}`,
  () => '/v1/files',
  (s) => `/v1/files/${s}`,
  (s) => `/v1/files/${s}/content`,
  () => '/v1/batches',
  (s) => `/v1/batches/${s}`,
  (s) => `/v1/batches/${s}/cancel`,
  () => '/v1/requests',
  (s) => `/v1/requests/${s}`,
  (s) => `/v1/requests/${s}/body`,
  (s) => `/v1/requests/sessions/${s}`,
  () => '/v1/audio/transcriptions',
  () => '/v1/audio/translations',
  () => '/admin/v1/projects',
  (s) => `/admin/v1/projects/${s}`,
  (s) => `/admin/v1/projects/${s}/keys`,
  (s) => `/admin/v1/projects/${s}/credits`,
  (s) => `/admin/v1/projects/${s}/usage`,
  (s) => `/admin/v1/keys/${s}/revoke`,
  (s) => `/admin/v1/keys/${s}`,
  (s) => `/admin/v1/keys/${s}/rotate`,
  () => '/admin/v1/requests',
  () => '/admin/v1/requests/export',
  (s) => `/admin/v1/requests/${s}`,
  (s) => `/admin/v1/requests/${s}/body`,
  (s) => `/admin/v1/projects/${s}/logging`,
  () => '/v1/spend',
  () => '/admin/v1/spend',
  () => '/admin/v1/users',
  (s) => `/admin/v1/users/${s}`,
  (s) => `/admin/v1/projects/${s}/members`,
  (s) => `/admin/v1/projects/${s}/members/${s}`,
  () => '/admin/v1/audit',
  () => '/admin/v1/audit/export',
  () => '/console/api/session/options',
  () => '/console/api/session/oidc/start',
  () => '/console/api/session/oidc/callback',
  () => '/healthz',
  () => '/readyz',
  () => '/metrics',
  (s) => `/${s}`,
];

const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?limit=2', '?limit=0', '?limit=-1', '?limit=abc', '?limit=100000', '?after=constructor', '?after=__proto__', '?purpose=batch',
    '?format=csv', '?format=xml', '?since=abc', '?until=99999999999', '?project_id=constructor', '?code=abc&state=def', '?error=access_denied&state=x', '?code=&state=&iss=%00'),
  fc
    .record(
      {
        group_by: fc.constantFrom('key', 'model', 'tag', 'end_user', 'day', 'project', ...PROTOTYPE_NAMES),
        since: fc.oneof(fc.constantFrom('0', '2026-03-01', '2026-13-45', '99999999999', '2026-03-01T25:00:00Z', '-1'), fc.string({ maxLength: 12 })),
        until: fc.constantFrom('1', '2026-04-01', 'now', '2026-03-01T00:00:00+05:00'),
        format: fc.constantFrom('json', 'csv', 'ndjson', 'xml', ...PROTOTYPE_NAMES),
        project_id: fc.constantFrom('constructor', 'proj_x', 'x'.repeat(80)),
      },
      { requiredKeys: [] },
    )
    .map((q) => `?${new URLSearchParams(q).toString()}`),
  fc.constantFrom(
    '?since=-1',
    '?since=99999999999&until=1',
    '?until=1e99',
    '?status=error',
    '?status=999',
    '?min_cost_usd=1e400',
    "?model=x'%20OR%201=1--",
    '?tag=%25_%5C',
    '?session_id=__proto__',
    '?project_id=constructor',
    '?format=csv',
    '?after=req_%00',
  ),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 }), { maxKeys: 3 }).map(
    (q) => (Object.keys(q).length ? `?${new URLSearchParams(q).toString()}` : ''),
  ),
);

const modelName = fc.oneof(fc.constantFrom(...CATALOG_IDS, ...PROTOTYPE_NAMES), fc.string({ maxLength: 30 }), fc.integer(), fc.constant(null));

/** Anthropic content blocks, each of a known or unknown type, with fields possibly wrong. */
const block = fc.record(
  {
    type: fc.constantFrom('text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'server_tool_use', ...PROTOTYPE_NAMES),
    text: fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 1 })),
    source: fc.oneof(
      fc.record({ type: fc.constantFrom('base64', 'url', 'text', 'content', 'file'), media_type: fc.constantFrom('image/png', 'application/pdf', 'text/plain', 'x'), data: fc.string({ maxLength: 12 }), url: fc.string({ maxLength: 20 }) }, { requiredKeys: [] }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    id: fc.constantFrom('toolu_1', 'call_1', ...PROTOTYPE_NAMES),
    tool_use_id: fc.constantFrom('toolu_1', 'call_1', ...PROTOTYPE_NAMES),
    name: fc.oneof(fc.constantFrom('f', 'get_weather'), fc.string({ maxLength: 10 })),
    input: fc.jsonValue({ maxDepth: 2 }),
    content: fc.oneof(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 3 })),
    thinking: fc.string({ maxLength: 20 }),
    signature: fc.string({ maxLength: 20 }),
    is_error: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: ['type'] },
);

const anthropicMessages = fc.array(
  fc.record({ role: fc.constantFrom('user', 'assistant', 'system', ...PROTOTYPE_NAMES), content: fc.oneof(fc.string({ maxLength: 40 }), fc.array(block, { maxLength: 4 })) }, { requiredKeys: [] }),
  { maxLength: 4 },
);

/** A key's policy on the admin key routes, each field possibly malformed (overlapping globs, unknown windows, negative budgets, past expiry). */
export const keyPolicyFields = {
  models: fc.oneof(fc.array(fc.constantFrom('small-*', '*-mini', 'small-a', 'a[b]', '', 'x y', '**', '?', ...PROTOTYPE_NAMES), { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })),
  budget: fc.oneof(
    fc.record({ limit_usd: fc.oneof(fc.double(), fc.integer(), fc.string({ maxLength: 4 })), window: fc.constantFrom('day', 'week', 'month', 'total', 'year', ...PROTOTYPE_NAMES) }, { requiredKeys: [] }),
    fc.jsonValue({ maxDepth: 2 }),
  ),
  rpm: fc.oneof(fc.integer({ min: -2, max: 2_000_000 }), fc.double(), fc.jsonValue({ maxDepth: 1 })),
  tpm: fc.oneof(fc.integer(), fc.double(), fc.jsonValue({ maxDepth: 1 })),
  expires_at: fc.oneof(fc.integer(), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER), fc.jsonValue({ maxDepth: 1 })),
  tags: fc.oneof(fc.array(fc.oneof(fc.constantFrom('a,b', 'ok', 'team:x', ...PROTOTYPE_NAMES), fc.string({ maxLength: 70 })), { maxLength: 22 }), fc.jsonValue({ maxDepth: 1 })),
  grace_seconds: fc.oneof(fc.integer({ min: -5, max: 3_000_000 }), fc.double(), fc.jsonValue({ maxDepth: 1 })),
};

/** Bodies shaped like real requests, with each field possibly wrong. */
const requestLike = fc.record(
  {
    model: modelName,
    messages: fc.oneof(
      fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'assistant', 'tool', 'developer', ...PROTOTYPE_NAMES), content: fc.oneof(fc.string({ maxLength: 50 }), fc.jsonValue({ maxDepth: 3 })) }, { requiredKeys: [] }), { maxLength: 4 }),
      anthropicMessages,
      fc.jsonValue({ maxDepth: 2 }),
    ),
    system: fc.oneof(fc.string({ maxLength: 30 }), fc.array(block, { maxLength: 2 }), fc.jsonValue({ maxDepth: 2 })),
    stop_sequences: fc.oneof(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
    thinking: fc.oneof(fc.record({ type: fc.constantFrom('enabled', 'disabled', 'adaptive', 'x'), budget_tokens: fc.oneof(fc.integer(), fc.double()) }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 1 })),
    top_k: fc.oneof(fc.integer({ min: -2, max: 100 }), fc.double(), fc.string({ maxLength: 3 })),
    input: fc.oneof(fc.string({ maxLength: 80 }), fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }), fc.jsonValue({ maxDepth: 3 })),
    metadata: fc.oneof(fc.dictionary(fc.constantFrom(...PROTOTYPE_NAMES, 'labels', 'categories', 'schema', 'usecase', 'threshold'), fc.jsonValue({ maxDepth: 3 })), fc.jsonValue({ maxDepth: 2 })),
    stream: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 1 })),
    max_tokens: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 })),
    temperature: fc.oneof(fc.double(), fc.string({ maxLength: 5 })),
    input_file_id: fc.oneof(fc.constantFrom('file-abc', ...PROTOTYPE_NAMES), fc.string({ maxLength: 20 })),
    endpoint: fc.constantFrom('/v1/chat/completions', '/v1/embeddings', 'constructor', ''),
    completion_window: fc.constantFrom('24h', '1h', ''),
    name: fc.oneof(fc.string({ maxLength: 30 }), fc.integer()),
    amount_usd: fc.oneof(fc.double(), fc.integer(), fc.string({ maxLength: 6 })),
    encoding_format: fc.constantFrom('float', 'base64', 'constructor'),
    dimensions: fc.oneof(fc.integer(), fc.double()),
    prompt: fc.oneof(fc.string({ maxLength: 50 }), fc.array(fc.oneof(fc.string({ maxLength: 10 }), fc.integer()), { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })),
    tools: fc.oneof(
      fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 3 }),
      fc.array(fc.record({ type: fc.constantFrom('custom', 'web_search_20250305', 'bash_20250124'), name: fc.constantFrom('f', 'web_search', 'x y'), input_schema: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }), { maxLength: 3 }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    tool_choice: fc.oneof(
      fc.constantFrom('none', 'auto', 'required', ...PROTOTYPE_NAMES),
      fc.record({ type: fc.constantFrom('auto', 'any', 'tool', 'none', 'x'), name: fc.constantFrom('f', ''), disable_parallel_tool_use: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    n: fc.oneof(fc.integer({ min: -2, max: 200 }), fc.double(), fc.string({ maxLength: 3 })),
    logprobs: fc.oneof(fc.boolean(), fc.integer({ min: -1, max: 8 }), fc.jsonValue({ maxDepth: 1 })),
    ...keyPolicyFields,
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  { weight: 5, arbitrary: requestLike.map((b) => JSON.stringify(b)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"a":', 'null', '[]', '"x"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}') },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 3_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)) },
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'nonsense',
  null,
);

export const requestArbitrary: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'),
    route: fc.nat({ max: ROUTES.length - 1 }),
    segment,
    query,
    auth: fc.constantFrom('key', 'key', 'key', 'admin', 'none', 'bad', 'bare'),
    contentType,
    body,
    tags: fc.option(fc.oneof(fc.constantFrom('a,b', 'team-a, prod', ',,', 'x'.repeat(70), 'a b', 'constructor,__proto__'), fc.stringMatching(/^[ -~]{0,80}$/)), { nil: undefined }),
  })
  .map(({ method, route, segment: s, query: q, auth, contentType: type, body: b, tags }) => {
    const hasBody = method !== 'GET' && method !== 'HEAD';
    return { method, path: ROUTES[route]!(s) + q, auth, contentType: hasBody ? type : null, body: hasBody ? b : null, ...(tags === undefined ? {} : { tags }) } as FuzzRequest;
  });

/** A Messages body an engine answers. */
const VALID_MESSAGE: Record<string, unknown> = {
  model: 'gpt-oss-120b',
  max_tokens: 16,
  messages: [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
  ],
};

const MUTABLE_FIELDS = ['model', 'messages', 'system', 'stop_sequences', 'thinking', 'top_k', 'stream', 'max_tokens', 'temperature', 'tools', 'tool_choice', 'metadata'];

/** `base` with `fields` of `like` put over it (a valid body made wrong a field or two at a time). */
const mutated = (base: Record<string, unknown>, like: Record<string, unknown>, fields: readonly string[]) => {
  const out = { ...base };
  for (const field of fields) if (field in like) out[field] = like[field];
  return out;
};

/** POSTs of JSON to Anthropic's Messages routes, with a valid key: the fuzz of the wire past authentication. */
export const messagesRequestArbitrary: fc.Arbitrary<FuzzRequest> = fc
  .record({
    path: fc.constantFrom('/v1/messages', '/v1/messages?beta=true', '/v1/messages/count_tokens'),
    body: fc.oneof(
      { weight: 6, arbitrary: fc.tuple(requestLike, fc.shuffledSubarray(MUTABLE_FIELDS, { maxLength: 2 })).map(([like, fields]) => JSON.stringify(mutated(VALID_MESSAGE, like, fields))) },
      { weight: 2, arbitrary: requestLike.map((b) => JSON.stringify(b)) },
      { weight: 1, arbitrary: body },
    ),
  })
  .map(({ path, body: b }) => ({ method: 'POST', path, auth: 'key', contentType: 'application/json', body: b }) as FuzzRequest);

function headersFor(request: FuzzRequest, target: FuzzTarget): Record<string, string> {
  const headers: Record<string, string> = {};
  if (request.auth === 'key') headers.authorization = `Bearer ${target.apiKey}`;
  if (request.auth === 'admin') headers.authorization = `Bearer ${target.adminToken}`;
  if (request.auth === 'bad') headers.authorization = 'Bearer sk-not-a-real-key';
  if (request.auth === 'bare') headers.authorization = target.apiKey;
  if (request.contentType) headers['content-type'] = request.contentType;
  if (request.tags !== undefined) headers['x-sluice-tags'] = request.tags;
  return headers;
}

/** 5xx codes that describe the environment (upstream, missing model files), not a fault. */
const ENVIRONMENT_CODES = new Set(['model_not_available', 'upstream_error', 'upstream_timeout']);

/** The routes that answer in Anthropic's envelope (another method, or another path below them, is the house's 404 or 405). */
const MESSAGES_ROUTES: ReadonlySet<string> = new Set(['/v1/messages', '/v1/messages/count_tokens']);

/** The 5xx statuses of Anthropic's Messages routes that describe the environment: the engine overloaded or slow, a model unavailable. */
const ANTHROPIC_ENVIRONMENT_STATUSES = new Set([503, 504, 529]);

/** What is wrong with an error answer of a Messages route (Anthropic's envelope), or null. */
function anthropicProblem(parsed: unknown, status: number, text: string): string | null {
  const body = parsed as { type?: unknown; error?: { type?: unknown; message?: unknown }; request_id?: unknown } | null;
  const isEnvelope =
    body?.type === 'error' && typeof body.error?.type === 'string' && typeof body.error.message === 'string' && (body.request_id === null || typeof body.request_id === 'string');
  if (!isEnvelope) return `error ${status} is not Anthropic's envelope: ${text.slice(0, 160)}`;
  if (status >= 500 && !ANTHROPIC_ENVIRONMENT_STATUSES.has(status)) return `${status}: ${text.slice(0, 160)}`;
  return null;
}

/** Sends one request and returns a description of what is wrong with the answer, or null. */
export async function checkOne(request: FuzzRequest, target: FuzzTarget, stats: FuzzStats): Promise<string | null> {
  const response = await fetch(target.baseUrl + request.path, {
    method: request.method,
    headers: headersFor(request, target),
    body: request.body ?? undefined,
    // Sluice's own answer is checked: a redirect (to the identity provider, say) is not followed.
    redirect: 'manual',
  });
  const text = await response.text();
  stats.requests++;
  stats.byStatus.set(response.status, (stats.byStatus.get(response.status) ?? 0) + 1);
  if (!/^req_[0-9a-f]{24}$/.test(response.headers.get('x-request-id') ?? '')) return `no x-request-id (status ${response.status})`;
  if (response.status < 400) return null;
  if (request.method === 'HEAD') return response.status === 500 ? 'HEAD answered 500' : null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `error ${response.status} is not JSON: ${text.slice(0, 120)}`;
  }
  if (request.method === 'POST' && MESSAGES_ROUTES.has(request.path.split('?')[0]!)) return anthropicProblem(parsed, response.status, text);
  const error = (parsed as { error?: Record<string, unknown> })?.error;
  const isEnvelope =
    typeof error === 'object' &&
    error !== null &&
    typeof error.message === 'string' &&
    typeof error.type === 'string' &&
    (error.code === null || typeof error.code === 'string') &&
    (error.param === null || typeof error.param === 'string');
  if (!isEnvelope) return `error ${response.status} is not the envelope: ${text.slice(0, 160)}`;
  if (response.status === 500) return `500: ${text.slice(0, 160)}`;
  if (response.status >= 500 && !ENVIRONMENT_CODES.has(error.code as string)) return `${response.status}: ${text.slice(0, 160)}`;
  return null;
}

export async function fuzzHttpSurface(target: FuzzTarget, options: { numRuns: number; seed?: number; requests?: fc.Arbitrary<FuzzRequest> }): Promise<FuzzStats> {
  const stats: FuzzStats = { requests: 0, byStatus: new Map() };
  await fc.assert(
    fc.asyncProperty(options.requests ?? requestArbitrary, async (request) => {
      const problem = await checkOne(request, target, stats);
      if (problem) throw new Error(`${request.method} ${request.path.slice(0, 200)}: ${problem}`);
    }),
    { numRuns: options.numRuns, seed: options.seed },
  );
  return stats;
}
