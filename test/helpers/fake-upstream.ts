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
 * Paths are given without the `/v1` prefix and match the request path exactly.
 * `chat/completions` with `stream: true` and no queued behaviour streams the default
 * answer word by word (plus a usage chunk when `stream_options.include_usage` is set).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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

export interface ChatAnswer {
  content: string;
  reasoning?: string | null;
  finishReason?: string;
  /** Usage in the upstream's wire shape; `null` omits `usage` from the answer entirely. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number; reasoning_tokens?: number } | null;
  model?: string;
  /** Delay before answering (before the first chunk when streaming). */
  delayMs?: number;
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

export const json = (body: unknown, status = 200, delayMs?: number): Behavior => ({ type: 'json', status, body, delayMs });
export const fail = (status: number, message = `upstream failure ${status}`, extra: { code?: string | null; param?: string | null; delayMs?: number } = {}): Behavior => ({
  type: 'error',
  status,
  message,
  ...extra,
});
export const stall = (): Behavior => ({ type: 'stall' });
export const destroy = (): Behavior => ({ type: 'destroy' });
export const stream = (chunks: Array<string | Record<string, unknown>>, options: Omit<Extract<Behavior, { type: 'stream' }>, 'type' | 'chunks'> = {}): Behavior => ({
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

export const DEFAULT_CHAT: Required<Omit<ChatAnswer, 'usage'>> & { usage: NonNullable<ChatAnswer['usage']> } = {
  content: 'Hello from the fake upstream.',
  reasoning: null,
  finishReason: 'stop',
  usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  model: 'fake-model',
  delayMs: 0,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function wordsOf(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

function wireUsage(usage: NonNullable<ChatAnswer['usage']>) {
  const out: Record<string, unknown> = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
  if (usage.reasoning_tokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoning_tokens };
  return out;
}

/** A deterministic vector per text: the same text always gives the same numbers. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, i) => Number((((h >>> (i % 24)) % 1000) / 1000 - 0.5).toFixed(6)));
}

export const MODERATION_CATEGORIES = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent',
  'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
] as const;

/** Moderation scores: `violence` is 0.9 when the text contains "kill", every other score 0.01. */
export function fakeModeration(text: string) {
  const scores: Record<string, number> = {};
  const flags: Record<string, boolean> = {};
  for (const c of MODERATION_CATEGORIES) {
    scores[c] = c === 'violence' && /kill/i.test(text) ? 0.9 : 0.01;
    flags[c] = scores[c]! >= 0.5;
  }
  return { flagged: Object.values(flags).some(Boolean), categories: flags, category_scores: scores };
}

/** Starts the fake on 127.0.0.1, on `port` or an ephemeral one. */
export async function startFakeUpstream(options: { port?: number } = {}): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const queues = new Map<string, Behavior[]>();
  const defaults = new Map<string, Behavior>();
  let chatAnswer: ChatAnswer = { ...DEFAULT_CHAT };
  let dimensions = 4;
  let connections = 0;
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };

  const chatCompletion = (model: string) => ({
    id: `chatcmpl-fake${requests.length}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: chatAnswer.model ?? model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: chatAnswer.content, ...(chatAnswer.reasoning ? { reasoning_content: chatAnswer.reasoning } : {}) },
        finish_reason: chatAnswer.finishReason ?? 'stop',
      },
    ],
    ...(chatAnswer.usage === null ? {} : { usage: wireUsage(chatAnswer.usage ?? DEFAULT_CHAT.usage) }),
  });

  const defaultBehavior = (req: RecordedRequest): Behavior => {
    const configured = defaults.get(req.path);
    if (configured) return configured;
    switch (req.path) {
      case '/chat/completions':
        if (req.body?.stream === true) {
          const chunks: Array<string | Record<string, unknown>> = [];
          if (chatAnswer.reasoning) chunks.push({ choices: [{ index: 0, delta: { reasoning_content: chatAnswer.reasoning }, finish_reason: null }] });
          chunks.push(...wordsOf(chatAnswer.content));
          return { type: 'stream', chunks, usage: chatAnswer.usage === undefined ? DEFAULT_CHAT.usage : chatAnswer.usage, firstDelayMs: chatAnswer.delayMs };
        }
        return json(chatCompletion(String(req.body?.model ?? 'unknown')), 200, chatAnswer.delayMs);
      case '/embeddings': {
        const inputs: string[] = Array.isArray(req.body?.input) ? req.body.input : [req.body?.input ?? ''];
        const tokens = inputs.reduce((n, t) => n + wordsOf(String(t)).length, 0);
        return json({
          object: 'list',
          data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(String(t), dimensions) })),
          model: req.body?.model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        });
      }
      case '/moderations': {
        const inputs: string[] = Array.isArray(req.body?.input) ? req.body.input : [req.body?.input ?? ''];
        return json({ id: 'modr-fake', model: req.body?.model, results: inputs.map((t) => fakeModeration(String(t))) });
      }
      case '/models':
        return json({ object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }] });
      default:
        return fail(404, `no route ${req.method} ${req.path}`);
    }
  };

  const streamChunk = (req: RecordedRequest, chunk: string | Record<string, unknown>) => {
    const base = { id: 'chatcmpl-fakestream', object: 'chat.completion.chunk', created: 1_700_000_000, model: String(req.body?.model ?? '') };
    return typeof chunk === 'string' ? { ...base, choices: [{ index: 0, delta: { content: chunk }, finish_reason: null }] } : { ...base, ...chunk };
  };

  async function runStream(req: RecordedRequest, res: ServerResponse, b: Extract<Behavior, { type: 'stream' }>) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    if (b.firstDelayMs) await sleep(b.firstDelayMs);
    const write = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
    let sent = 0;
    for (const chunk of b.chunks) {
      if (req.aborted) return;
      if (b.closeAfter !== undefined && sent >= b.closeAfter) {
        res.socket?.destroy();
        return;
      }
      write(streamChunk(req, chunk));
      sent++;
      if (b.delayMs) await sleep(b.delayMs);
    }
    if (req.aborted) return;
    if (b.closeAfter !== undefined && sent >= b.closeAfter) {
      res.socket?.destroy();
      return;
    }
    write(streamChunk(req, { choices: [{ index: 0, delta: {}, finish_reason: chatAnswer.finishReason ?? 'stop' }] }));
    const usage = b.usage === undefined ? DEFAULT_CHAT.usage : b.usage;
    if (usage && req.body?.stream_options?.include_usage) write(streamChunk(req, { choices: [], usage: wireUsage(usage) }));
    if (!b.noDone) res.write('data: [DONE]\n\n');
    res.end();
  }

  async function run(req: RecordedRequest, res: ServerResponse, b: Behavior): Promise<void> {
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
        return runStream(req, res, b);
      case 'handler':
        return b.handle(req, res);
    }
  }

  const server = http.createServer((incoming, res) => {
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
      requests.push(req);
      res.on('close', () => {
        if (!res.writableFinished) req.aborted = true;
        notify();
      });
      res.on('finish', () => {
        req.completed = true;
        notify();
      });
      notify();
      const behavior = queues.get(req.path)?.shift() ?? defaultBehavior(req);
      run(req, res, behavior).catch(() => res.socket?.destroy());
    });
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;

  const enqueue = (path: string, ...behaviors: Behavior[]) => {
    queues.set(path, [...(queues.get(path) ?? []), ...behaviors]);
  };

  const waitFor = <T>(ready: () => T | undefined, timeoutMs: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = ready();
        if (value !== undefined) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`fake upstream: timed out waiting for ${what}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get connections() {
      return connections;
    },
    chat(answer) {
      chatAnswer = { ...chatAnswer, ...answer };
    },
    embeddingDimensions(n) {
      dimensions = n;
    },
    setDefault(path, behavior) {
      defaults.set(path, behavior);
    },
    enqueue,
    flake(path, times, status = 503) {
      enqueue(path, ...Array.from({ length: times }, () => fail(status)));
    },
    count(path) {
      return path === undefined ? requests.length : requests.filter((r) => r.path === path).length;
    },
    waitForRequests(n, path, timeoutMs = 5_000) {
      return waitFor(() => {
        const matching = requests.filter((r) => path === undefined || r.path === path);
        return matching.length >= n ? matching : undefined;
      }, timeoutMs, `${n} request(s)${path ? ` to ${path}` : ''}`);
    },
    waitForAborted(n, timeoutMs = 5_000) {
      return waitFor(() => {
        const aborted = requests.filter((r) => r.aborted);
        return aborted.length >= n ? aborted : undefined;
      }, timeoutMs, `${n} aborted request(s)`);
    },
    reset() {
      requests.length = 0;
      queues.clear();
      defaults.clear();
      chatAnswer = { ...DEFAULT_CHAT };
      dimensions = 4;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
