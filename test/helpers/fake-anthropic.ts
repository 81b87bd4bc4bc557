/**
 * A fake Anthropic Messages API on loopback (plain node:http), built from the public
 * reference (https://docs.anthropic.com/en/api/messages, /messages-streaming, /errors):
 * `POST /v1/messages`, JSON or SSE (`message_start`, `content_block_start`, `ping`,
 * `content_block_delta` with text/thinking/input_json/signature deltas,
 * `content_block_stop`, `message_delta`, `message_stop`), and `GET /v1/models`.
 *
 * It checks what it receives as Anthropic does: the `x-api-key` (401
 * authentication_error otherwise, echoing the key it got, as a careless provider might),
 * `anthropic-version` (400 when missing), `model`, `max_tokens` and `messages` (400
 * invalid_request_error). Every request is recorded.
 *
 *   const fake = await startFakeAnthropic('sk-ant-test-key');
 *   fake.enqueue(answer([{ type: 'text', text: 'Hi' }], { usage: { input_tokens: 5, output_tokens: 1 } }));
 *   fake.enqueue(anthropicError(529, 'overloaded_error', 'Overloaded'));
 *   fake.requests[0].headers['anthropic-version'];
 *
 * Without a queued behaviour it plays a tool loop: with `tools` and no `tool_result` in
 * the last user turn it calls the first tool with `{"city":"Oslo"}`; otherwise it says
 * `It is 21 degrees in Oslo.`.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

type Json = Record<string, any>;

export interface AnthropicRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export type AnthropicBehavior =
  | { type: 'answer'; content: Json[]; stopReason: string; usage: Json }
  | { type: 'error'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  /** Streams the answer's first text delta, then ends the stream without `message_stop` (a truncated stream). */
  | { type: 'cut' }
  /** An `error` event mid-stream after the first text delta (as Anthropic sends overloaded_error). */
  | { type: 'stream_error'; errorType: string; message: string };

export const DEFAULT_USAGE = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
export const TOOL_ANSWER = 'It is 21 degrees in Oslo.';

export const answer = (content: Json[], options: { stopReason?: string; usage?: Json } = {}): AnthropicBehavior => ({
  type: 'answer',
  content,
  stopReason: options.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
  usage: options.usage ?? DEFAULT_USAGE,
});

export const anthropicError = (status: number, errorType: string, message: string, headers?: Record<string, string>): AnthropicBehavior => ({
  type: 'error',
  status,
  errorType,
  message,
  headers,
});

export interface FakeAnthropic {
  /** `http://127.0.0.1:<port>/v1`: what goes in `base_url`. */
  baseUrl: string;
  requests: AnthropicRequest[];
  enqueue(...behaviors: AnthropicBehavior[]): void;
  reset(): void;
  close(): Promise<void>;
}

function errorBody(errorType: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type: errorType, message }, request_id: 'req_fake' });
}

/** The default tool loop's answer to `body`. */
function toolLoopAnswer(body: Json): AnthropicBehavior {
  const last = Array.isArray(body.messages) ? body.messages.at(-1) : null;
  const answered = Array.isArray(last?.content) && last.content.some((b: Json) => b.type === 'tool_result');
  const tool = Array.isArray(body.tools) ? body.tools[0] : undefined;
  if (tool && !answered) return answer([{ type: 'tool_use', id: 'toolu_oslo', name: tool.name, input: { city: 'Oslo' } }]);
  return answer([{ type: 'text', text: TOOL_ANSWER }]);
}

/** What an Anthropic server refuses before answering: the key, the version header, the required fields. */
function refusal(req: AnthropicRequest, key: string): AnthropicBehavior | null {
  const given = req.headers['x-api-key'];
  if (given !== key) return anthropicError(401, 'authentication_error', `invalid x-api-key: ${String(given)}`);
  if (!req.headers['anthropic-version']) return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
  if (req.path !== '/v1/messages') return null;
  for (const field of ['model', 'max_tokens', 'messages']) {
    if (req.body?.[field] === undefined) return anthropicError(400, 'invalid_request_error', `${field}: Field required`);
  }
  return null;
}

function sse(res: ServerResponse, type: string, data: Json): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

/** A block's deltas, as Anthropic streams them: text and JSON in two pieces, thinking then its signature. */
function blockEvents(res: ServerResponse, index: number, block: Json): void {
  const start = block.type === 'tool_use' ? { ...block, input: {} } : block.type === 'thinking' ? { type: 'thinking', thinking: '' } : { type: 'text', text: '' };
  sse(res, 'content_block_start', { index, content_block: start });
  const halves = (s: string) => [s.slice(0, Math.ceil(s.length / 2)), s.slice(Math.ceil(s.length / 2))].filter((p) => p !== '');
  if (block.type === 'text') for (const text of halves(block.text)) sse(res, 'content_block_delta', { index, delta: { type: 'text_delta', text } });
  if (block.type === 'thinking') {
    sse(res, 'content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
    sse(res, 'content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature ?? 'sig' } });
  }
  if (block.type === 'tool_use') {
    for (const partial_json of halves(JSON.stringify(block.input))) sse(res, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
  }
  sse(res, 'content_block_stop', { index });
}

function stream(res: ServerResponse, model: string, behavior: AnthropicBehavior): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_fake' });
  const full = behavior.type === 'answer' ? behavior : (answer([{ type: 'text', text: 'Hello there' }]) as Extract<AnthropicBehavior, { type: 'answer' }>);
  const { output_tokens, ...inputUsage } = full.usage;
  sse(res, 'message_start', { message: { id: 'msg_fake', type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { ...inputUsage, output_tokens: 1 } } });
  sse(res, 'ping', {});
  if (behavior.type === 'cut' || behavior.type === 'stream_error') {
    sse(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hel' } });
    if (behavior.type === 'stream_error') sse(res, 'error', { error: { type: behavior.errorType, message: behavior.message } });
    res.end();
    return;
  }
  full.content.forEach((block, index) => blockEvents(res, index, block));
  sse(res, 'message_delta', { delta: { stop_reason: full.stopReason, stop_sequence: null }, usage: { output_tokens } });
  sse(res, 'message_stop', {});
  res.end();
}

function respond(req: AnthropicRequest, res: ServerResponse, behavior: AnthropicBehavior): void {
  if (behavior.type === 'error') {
    res.writeHead(behavior.status, { 'content-type': 'application/json', 'request-id': 'req_fake', ...behavior.headers }).end(errorBody(behavior.errorType, behavior.message));
    return;
  }
  const model = String(req.body?.model ?? '');
  if (req.body?.stream === true) return stream(res, model, behavior);
  const full = behavior.type === 'answer' ? behavior : answer([{ type: 'text', text: 'Hello there' }]);
  if (full.type !== 'answer') return;
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake' }).end(
    JSON.stringify({ id: 'msg_fake', type: 'message', role: 'assistant', model, content: full.content, stop_reason: full.stopReason, stop_sequence: null, usage: full.usage }),
  );
}

export async function startFakeAnthropic(key: string): Promise<FakeAnthropic> {
  const requests: AnthropicRequest[] = [];
  let queue: AnthropicBehavior[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      const req: AnthropicRequest = { method: incoming.method ?? 'GET', path: (incoming.url ?? '/').split('?')[0]!, headers: incoming.headers, body };
      requests.push(req);
      const refused = refusal(req, key);
      if (refused) return respond(req, res, refused);
      if (req.method === 'GET' && req.path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ type: 'model', id: 'claude-fake' }], has_more: false }));
        return;
      }
      if (req.path !== '/v1/messages') return respond(req, res, anthropicError(404, 'not_found_error', `no route ${req.path}`));
      respond(req, res, queue.shift() ?? toolLoopAnswer(req.body as Json));
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...behaviors) => void queue.push(...behaviors),
    reset: () => {
      requests.length = 0;
      queue = [];
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
