/**
 * A recording Anthropic Messages server on loopback (plain node:http) that records every request
 * it receives — method, path, query, headers and body — and answers as Anthropic's API
 * does: `POST /v1/messages` (JSON, or SSE with `stream: true`), `POST /v1/messages/count_tokens`
 * and `GET /v1/models`. Turns are scripted: each queued answer is a list of blocks (text or
 * tool_use) used once, in order; with none queued it answers `defaultText`.
 *
 * It is how the tests learn what an agent CLI sends (Claude Code against it directly), not
 * a stand-in for Sluice: the end-to-end tests put Sluice in front of an OpenAI-protocol engine.
 * It takes any key and any headers, as a gateway under study must (fake-anthropic.ts is the
 * strict one, a provider for Sluice's anthropic protocol).
 *
 *   const anthropic = await startRecordingAnthropic();
 *   anthropic.enqueue([{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: { file_path, content } }]);
 *   anthropic.enqueue([{ type: 'text', text: 'Done.' }]);
 *   anthropic.requests  // every request, in order
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type RecordedAnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicRecordedRequest {
  method: string;
  /** The path without the query string, e.g. `/v1/messages`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface RecordingAnthropic {
  baseUrl: string;
  requests: AnthropicRecordedRequest[];
  /** Queue the blocks of the next `/v1/messages` answer. */
  enqueue(blocks: RecordedAnthropicBlock[]): void;
  /** The `/v1/messages` requests only (count_tokens excluded). */
  messages(): AnthropicRecordedRequest[];
  close(): Promise<void>;
}

const USAGE = { input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function answerOf(blocks: RecordedAnthropicBlock[], model: string, sequence: number) {
  return {
    id: `msg_fake_${sequence}`,
    type: 'message',
    role: 'assistant',
    model,
    content: blocks,
    stop_reason: blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: USAGE,
  };
}

/** The SSE events of `answer`, as Anthropic streams a message. */
function eventsOf(answer: ReturnType<typeof answerOf>): Array<[string, unknown]> {
  const events: Array<[string, unknown]> = [
    ['message_start', { type: 'message_start', message: { ...answer, content: [], stop_reason: null, usage: { ...USAGE, output_tokens: 1 } } }],
  ];
  answer.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
      const json = JSON.stringify(block.input);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: answer.stop_reason, stop_sequence: null }, usage: { output_tokens: USAGE.output_tokens } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}

export async function startRecordingAnthropic(options: { defaultText?: string } = {}): Promise<RecordingAnthropic> {
  const requests: AnthropicRecordedRequest[] = [];
  const queue: RecordedAnthropicBlock[][] = [];
  const sockets = new Set<Socket>();
  let sequence = 0;
  const defaultText = options.defaultText ?? 'Hello from the fake Anthropic server.';

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      let body: any = null;
      try {
        body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });
      const json = (status: number, payload: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${requests.length}` }).end(JSON.stringify(payload));
      if (req.method === 'GET' && url.pathname === '/v1/models') {
        const data = [{ type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' }];
        return json(200, { data, has_more: false, first_id: data[0]!.id, last_id: data[0]!.id });
      }
      if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') return json(200, { input_tokens: 42 });
      if (req.method !== 'POST' || url.pathname !== '/v1/messages') {
        return json(404, { type: 'error', error: { type: 'not_found_error', message: `Not found: ${url.pathname}` } });
      }
      const answer = answerOf(queue.shift() ?? [{ type: 'text', text: defaultText }], String(body?.model ?? ''), ++sequence);
      if (body?.stream !== true) return json(200, answer);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_fake_${requests.length}` });
      for (const [event, data] of eventsOf(answer)) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (blocks) => void queue.push(blocks),
    messages: () => requests.filter((r) => r.path === '/v1/messages'),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
