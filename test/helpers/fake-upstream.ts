/**
 * A fake OpenAI-compatible server on loopback (plain node:http), for tests and benchmarks
 * that need an upstream: chat completions (JSON and SSE), embeddings, moderations, models.
 *
 * Usage:
 *
 *   const upstream = await startFakeUpstream();
 *   // YAML: models: { gpt-oss-120b: { backend: openai, base_url: ${upstream.baseUrl} } }
 *   upstream.chat({ content: 'Hi', usage: { prompt_tokens: 5, completion_tokens: 1 } }); // default answer
 *   upstream.chat({ delayMs: 300 });                               // ... answered after 300 ms
 *   upstream.chat({ toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }] }); // answers with a tool call
 *   upstream.enqueue('/chat/completions', fail(503), fail(503));   // the next two calls fail, then the default
 *   upstream.flake('/chat/completions', 2);                        // same thing, shorter
 *   upstream.setDefault('/chat/completions', stall());             // every call hangs until the client aborts
 *   upstream.enqueue('/chat/completions', stream(['Hel', 'lo'], { delayMs: 50 }));
 *   upstream.enqueue('/chat/completions', stream(['a', 'b'], { closeAfter: 1 })); // socket closed mid-stream
 *   upstream.enqueue('/chat/completions', destroy());              // connection dropped, no response
 *   ...
 *   upstream.requests[0].body.model; upstream.requests[0].headers['x-request-id'];
 *   upstream.count('/chat/completions'); await upstream.waitForAborted(1);
 *   upstream.reset(); await upstream.close();
 *
 * `/completions` (the legacy text route) answers the default answer's text, streamed word
 * by word with `stream: true`.
 *
 * Paths are given without the `/v1` prefix and match the request path exactly.
 * `chat/completions` with `stream: true` and no queued behaviour streams the default
 * answer word by word (plus a usage chunk when `stream_options.include_usage` is set).
 * The default answer honours the request's `n` (one choice each) and `logprobs`, and
 * reports a `system_fingerprint`, as engines do.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  chatCompletionBody,
  DEFAULT_CHAT,
  fakeEmbedding,
  fakeModeration,
  streamChunk,
  textCompletionBody,
  toolCallDeltas,
  wireUsage,
  wordsOf,
  type ChatAnswer,
} from './fake-upstream-answers.js';

export {
  DEFAULT_CHAT,
  FAKE_FINGERPRINT,
  fakeEmbedding,
  fakeLogprobs,
  fakeModeration,
  MODERATION_CATEGORIES,
  type ChatAnswer,
  type FakeToolCall,
} from './fake-upstream-answers.js';

export interface RecordedRequest {
  method: string;
  /** Path without the `/v1` prefix and without the query string, e.g. `/chat/completions`. */
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body, or null when the body was empty or not JSON. */
  body: any;
  rawBody: string;
  receivedAtMs: number;
  /** True once the client closed the connection before the response had ended. */
  aborted: boolean;
  /** True once the full response was written. */
  completed: boolean;
}

export type Behavior =
  /** Answer with this JSON body. */
  | { type: 'json'; status?: number; body: unknown; headers?: Record<string, string>; delayMs?: number }
  /** Answer with an OpenAI-style error envelope. */
  | { type: 'error'; status: number; message?: string; code?: string | null; param?: string | null; errorType?: string; delayMs?: number }
  /** Read the request, never answer (until the client gives up). */
  | { type: 'stall' }
  /** Close the socket without answering (a connection failure seen by the client). */
  | { type: 'destroy' }
  /** SSE: each item a `data:` event; strings are content deltas, objects are sent as-is. */
  | {
      type: 'stream';
      chunks: Array<string | Record<string, unknown>>;
      delayMs?: number;
      /** Delay before the first chunk (after the headers). */
      firstDelayMs?: number;
      /** Usage chunk sent at the end (before [DONE]) when the request asked for it; null never sends one. */
      usage?: ChatAnswer['usage'];
      /** Destroy the socket after this many chunks. */
      closeAfter?: number;
      /** Omit the final `data: [DONE]`. */
      noDone?: boolean;
    }
  /** Full control. */
  | { type: 'handler'; handle: (req: RecordedRequest, res: ServerResponse) => void | Promise<void> };

type StreamBehavior = Extract<Behavior, { type: 'stream' }>;

export const json = (body: unknown, status = 200, delayMs?: number): Behavior => ({ type: 'json', status, body, delayMs });
export const fail = (
  status: number,
  message = `upstream failure ${status}`,
  extra: { code?: string | null; param?: string | null; delayMs?: number } = {},
): Behavior => ({ type: 'error', status, message, ...extra });
export const stall = (): Behavior => ({ type: 'stall' });
export const destroy = (): Behavior => ({ type: 'destroy' });
export const stream = (chunks: Array<string | Record<string, unknown>>, options: Omit<StreamBehavior, 'type' | 'chunks'> = {}): Behavior => ({
  type: 'stream',
  chunks,
  ...options,
});
export const handler = (handle: Extract<Behavior, { type: 'handler' }>['handle']): Behavior => ({ type: 'handler', handle });

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>/v1`: what goes in `base_url`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** TCP connections accepted so far (keep-alive check). */
  readonly connections: number;
  /** Sets the default chat answer (non-streaming and streaming). */
  chat(answer: Partial<ChatAnswer>): void;
  /** Sets the embedding vector length (default 4). */
  embeddingDimensions(dimensions: number): void;
  /** Replaces the default behaviour of a path until reset(). */
  setDefault(path: string, behavior: Behavior): void;
  /** One-shot behaviours, consumed in order by the next requests to `path`, before the default. */
  enqueue(path: string, ...behaviors: Behavior[]): void;
  /** The next `times` requests to `path` fail with `status` (default 503), then the default answers. */
  flake(path: string, times: number, status?: number): void;
  count(path?: string): number;
  /** Resolves once `n` requests (to `path`, when given) have arrived. */
  waitForRequests(n: number, path?: string, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once `n` requests were aborted by the client. */
  waitForAborted(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Forgets requests, queued and default behaviours, and the default chat answer. */
  reset(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const inputsOf = (body: any): string[] => (Array.isArray(body?.input) ? body.input : [body?.input ?? '']).map(String);

class FakeUpstreamServer implements FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  connections = 0;
  port = 0;
  readonly #server = http.createServer((incoming, res) => this.#receive(incoming, res));
  readonly #queues = new Map<string, Behavior[]>();
  readonly #defaults = new Map<string, Behavior>();
  readonly #sockets = new Set<Socket>();
  readonly #waiters = new Set<() => void>();
  #chat: ChatAnswer = { ...DEFAULT_CHAT };
  #dimensions = 4;

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async listen(port: number): Promise<void> {
    this.#server.on('connection', (socket) => {
      this.connections++;
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', resolve);
    });
    this.port = (this.#server.address() as AddressInfo).port;
  }

  chat(answer: Partial<ChatAnswer>): void {
    this.#chat = { ...this.#chat, ...answer };
  }

  embeddingDimensions(dimensions: number): void {
    this.#dimensions = dimensions;
  }

  setDefault(path: string, behavior: Behavior): void {
    this.#defaults.set(path, behavior);
  }

  enqueue = (path: string, ...behaviors: Behavior[]): void => {
    this.#queues.set(path, [...(this.#queues.get(path) ?? []), ...behaviors]);
  };

  flake(path: string, times: number, status = 503): void {
    this.enqueue(path, ...Array.from({ length: times }, () => fail(status)));
  }

  count(path?: string): number {
    return path === undefined ? this.requests.length : this.requests.filter((r) => r.path === path).length;
  }

  waitForRequests(n: number, path?: string, timeoutMs = 5_000): Promise<RecordedRequest[]> {
    return this.#waitFor(() => {
      const matching = this.requests.filter((r) => path === undefined || r.path === path);
      return matching.length >= n ? matching : undefined;
    }, timeoutMs, `${n} request(s)${path ? ` to ${path}` : ''}`);
  }

  waitForAborted(n: number, timeoutMs = 5_000): Promise<RecordedRequest[]> {
    return this.#waitFor(() => {
      const aborted = this.requests.filter((r) => r.aborted);
      return aborted.length >= n ? aborted : undefined;
    }, timeoutMs, `${n} aborted request(s)`);
  }

  reset(): void {
    this.requests.length = 0;
    this.#queues.clear();
    this.#defaults.clear();
    this.#chat = { ...DEFAULT_CHAT };
    this.#dimensions = 4;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #notify(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  #waitFor<T>(ready: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = ready();
        if (value === undefined) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`fake upstream: timed out waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }

  #receive(incoming: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = rawBody ? JSON.parse(rawBody) : null;
      } catch {
        body = null;
      }
      const url = (incoming.url ?? '/').split('?')[0]!;
      const req: RecordedRequest = {
        method: incoming.method ?? 'GET',
        path: url.startsWith('/v1/') ? url.slice(3) : url,
        headers: incoming.headers,
        body,
        rawBody,
        receivedAtMs: Date.now(),
        aborted: false,
        completed: false,
      };
      this.requests.push(req);
      res.on('close', () => {
        if (!res.writableFinished) req.aborted = true;
        this.#notify();
      });
      res.on('finish', () => {
        req.completed = true;
        this.#notify();
      });
      this.#notify();
      const behavior = this.#queues.get(req.path)?.shift() ?? this.#defaultBehavior(req);
      this.#run(req, res, behavior).catch(() => res.socket?.destroy());
    });
  }

  #defaultBehavior(req: RecordedRequest): Behavior {
    const configured = this.#defaults.get(req.path);
    if (configured) return configured;
    switch (req.path) {
      case '/chat/completions':
        return this.#chatBehavior(req);
      case '/completions':
        if (req.body?.stream !== true) return json(textCompletionBody(this.#chat, req.body, this.requests.length), 200, this.#chat.delayMs);
        return this.#textStream();
      case '/embeddings': {
        const inputs = inputsOf(req.body);
        const tokens = inputs.reduce((n, t) => n + wordsOf(t).length, 0);
        const data = inputs.map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t, this.#dimensions) }));
        return json({ object: 'list', data, model: req.body?.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
      }
      case '/moderations':
        return json({ id: 'modr-fake', model: req.body?.model, results: inputsOf(req.body).map(fakeModeration) });
      case '/models':
        return json({ object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }] });
      default:
        return fail(404, `no route ${req.method} ${req.path}`);
    }
  }

  /** A text completion streamed word by word, then its finish and (when asked) its usage. */
  #textStream(): Behavior {
    return handler((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const write = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        res.write(`data: ${JSON.stringify({ id: 'cmpl-fakestream', object: 'text_completion', created: 1_700_000_000, model: req.body?.model, choices, ...extra })}\n\n`);
      for (const word of wordsOf(this.#chat.content)) write([{ index: 0, text: word, logprobs: null, finish_reason: null }]);
      write([{ index: 0, text: '', logprobs: null, finish_reason: 'stop' }]);
      const usage = this.#chat.usage === undefined ? DEFAULT_CHAT.usage : this.#chat.usage;
      if (usage && req.body?.stream_options?.include_usage) write([], { usage: wireUsage(usage) });
      res.end('data: [DONE]\n\n');
    });
  }

  #chatBehavior(req: RecordedRequest): Behavior {
    const answer = this.#chat;
    if (req.body?.stream !== true) return json(chatCompletionBody(answer, req.body, this.requests.length), 200, answer.delayMs);
    const chunks: Array<string | Record<string, unknown>> = [];
    if (answer.reasoning) chunks.push({ choices: [{ index: 0, delta: { reasoning_content: answer.reasoning }, finish_reason: null }] });
    if (answer.toolCalls) chunks.push(...toolCallDeltas(answer.toolCalls));
    else chunks.push(...wordsOf(answer.content));
    return { type: 'stream', chunks, usage: answer.usage === undefined ? DEFAULT_CHAT.usage : answer.usage, firstDelayMs: answer.delayMs };
  }

  async #run(req: RecordedRequest, res: ServerResponse, b: Behavior): Promise<void> {
    switch (b.type) {
      case 'json':
        if (b.delayMs) await sleep(b.delayMs);
        if (req.aborted) return;
        res.writeHead(b.status ?? 200, { 'content-type': 'application/json', ...b.headers });
        res.end(JSON.stringify(b.body));
        return;
      case 'error': {
        if (b.delayMs) await sleep(b.delayMs);
        if (req.aborted) return;
        const error = { message: b.message ?? 'error', type: b.errorType ?? 'invalid_request_error', code: b.code ?? null, param: b.param ?? null };
        res.writeHead(b.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error }));
        return;
      }
      case 'stall':
        return;
      case 'destroy':
        res.socket?.destroy();
        return;
      case 'stream':
        return this.#stream(req, res, b);
      case 'handler':
        return b.handle(req, res);
    }
  }

  async #stream(req: RecordedRequest, res: ServerResponse, b: StreamBehavior): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    if (b.firstDelayMs) await sleep(b.firstDelayMs);
    const model = String(req.body?.model ?? '');
    const write = (chunk: string | Record<string, unknown>) => res.write(`data: ${JSON.stringify(streamChunk(model, chunk))}\n\n`);
    const cut = () => b.closeAfter !== undefined && sent >= b.closeAfter;
    let sent = 0;
    for (const chunk of b.chunks) {
      if (req.aborted) return;
      if (cut()) return void res.socket?.destroy();
      write(chunk);
      sent++;
      if (b.delayMs) await sleep(b.delayMs);
    }
    if (req.aborted) return;
    if (cut()) return void res.socket?.destroy();
    write({ choices: [{ index: 0, delta: {}, finish_reason: this.#chat.toolCalls ? 'tool_calls' : (this.#chat.finishReason ?? 'stop') }] });
    const usage = b.usage === undefined ? DEFAULT_CHAT.usage : b.usage;
    if (usage && req.body?.stream_options?.include_usage) write({ choices: [], usage: wireUsage(usage) });
    if (!b.noDone) res.write('data: [DONE]\n\n');
    res.end();
  }
}

/** Starts the fake on 127.0.0.1, on `port` or an ephemeral one. */
export async function startFakeUpstream(options: { port?: number } = {}): Promise<FakeUpstream> {
  const server = new FakeUpstreamServer();
  await server.listen(options.port ?? 0);
  return server;
}
