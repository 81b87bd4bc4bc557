/**
 * Server-Sent Events out, and the client-disconnect signal that stops work in flight.
 * Each event is written as soon as it is produced (no batching); the stream ends with
 * `data: [DONE]` (not on named streams, whose last event says how they ended), or, when it
 * fails after it started, with the stream error frame of the route's wire (route-errors.ts;
 * OpenAI's `event: error` + `data: {"error": …}` by default) and never a `[DONE]`: a client
 * must not take a cut stream for a finished one.
 */
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { answeredStatusOf, asAppError } from './errors.js';
import { errorContextOf } from './route-errors.js';
import { scopePolicyOf } from './scope-policy.js';
import { ReplyHeaderChannel, stageHeadersOnRaw } from './reply-headers.js';

const DISCONNECTED = Symbol('sluice.clientDisconnected');
type TrackedSocket = Socket & { [DISCONNECTED]?: AbortController };

/**
 * Aborts when the client's connection closes before its response was written. One
 * signal per connection, not per request: an AbortSignal costs several microseconds to
 * create, on every request, and an HTTP/1.1 connection carries one request at a time.
 * Work that listens to the signal does so through onAbort() (domain/shared/abort.ts) and
 * removes its listener when it ends, so a long-lived keep-alive connection neither
 * collects listeners nor pays EventTarget's cost for each request.
 */
export function clientAbortSignal(reply: FastifyReply): AbortSignal {
  const socket = reply.raw.socket as TrackedSocket | null;
  if (!socket || socket.destroyed) return AbortSignal.abort(new Error('the client closed the connection'));
  let controller = socket[DISCONNECTED];
  if (!controller) {
    const created = new AbortController();
    socket[DISCONNECTED] = controller = created;
    socket.once('close', () => created.abort(new Error('the client closed the connection')));
  }
  return controller.signal;
}

type Decorate = (event: unknown) => unknown;

export interface SseOptions {
  /**
   * Each event is written with its `type` as the SSE event name (`event: response.created`),
   * and no `[DONE]` follows the last one: the Responses API's stream.
   */
  named?: boolean;
}

const nameOf = (event: unknown): string => {
  const type = (event as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? `event: ${type}\n` : '';
};

/** The events to stream, or their opening: a stream handed to Fastify before its first event (sendSse). */
type Events = AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>;

/** The frame that ends a stream cut by `err`: its route's wire's, with the status the error would have been answered with. */
function errorFrame(reply: FastifyReply, err: unknown): string {
  const error = asAppError(err);
  const { overrides, format } = errorContextOf(reply.request);
  return format.streamFrame(error, { status: answeredStatusOf(error, overrides, format), requestId: reply.request.id, requestBody: reply.request.body });
}

async function* frames(opening: Events, signal: AbortSignal, reply: FastifyReply, decorate: Decorate | null, named: boolean): AsyncGenerator<string> {
  // Outside the try: a stream that fails to open fails before its first byte, as an HTTP error (FrameStream).
  const events = await opening;
  try {
    for await (const event of events) yield `${named ? nameOf(event) : ''}data: ${JSON.stringify(decorate ? decorate(event) : event)}\n\n`;
    if (!named) yield 'data: [DONE]\n\n';
  } catch (err) {
    if (signal.aborted) return;
    reply.log.warn({ err, request_id: reply.request.id }, 'stream failed after it started');
    yield errorFrame(reply, err);
  }
}

/** The scope's streamEventFields, given the trailers the caller's reply channel has sent so far. */
function decoratorOf(reply: FastifyReply): Decorate | null {
  const fields = scopePolicyOf(reply.request)?.streamEventFields;
  const channel = reply.request.caller?.reply;
  if (!fields || !(channel instanceof ReplyHeaderChannel)) return null;
  return (event) =>
    event !== null && typeof event === 'object' && !Array.isArray(event)
      ? fields(reply.request, event as Record<string, unknown>, channel.trailers)
      : event;
}

/**
 * The frames as the byte stream Fastify pipes to the client. Unlike Readable.from(), a
 * first frame given to it is already buffered when the pipe starts, so it goes out with
 * the headers in the pipe's first write instead of after another turn of read() → next()
 * → push(). Without one, the stream may be handed over before its events have opened: a
 * failure to open (before anything was pushed) destroys it with that error, after
 * `failedBeforeStart`, and Fastify answers the error as it would a thrown one. Destroyed
 * (the client gone), it ends the frames' generator, which stops the upstream and settles
 * the call.
 */
export class FrameStream extends Readable {
  readonly #frames: AsyncGenerator<string>;
  readonly #failedBeforeStart: ((err: unknown) => void) | undefined;
  #started: boolean;
  #pumping = false;

  constructor(frames: AsyncGenerator<string>, first?: IteratorResult<string>, failedBeforeStart?: (err: unknown) => void) {
    super();
    this.#frames = frames;
    this.#failedBeforeStart = failedBeforeStart;
    this.#started = first !== undefined;
    if (first) this.push(first.done ? null : first.value);
  }

  override _read(): void {
    void this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (;;) {
        const next = await this.#frames.next();
        if (this.destroyed) return;
        this.#started = true;
        if (next.done) {
          this.push(null);
          return;
        }
        if (!this.push(next.value)) return;
      }
    } catch (err) {
      if (!this.#started) this.#failedBeforeStart?.(err);
      this.destroy(err as Error);
    } finally {
      this.#pumping = false;
    }
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.#frames.return(undefined).then(
      () => callback(err),
      (closeErr: unknown) => callback((closeErr as Error | null) ?? err),
    );
  }
}

/** What sendSse puts on a stream's response (with `trailer` when the scope has some), taken off again when it fails before its first byte. */
const STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/**
 * Streams `events` as SSE. The scope's settlement headers (scope-policy.ts `trailers`) are
 * announced in `Trailer:`: the meter settles at the stream's end and sends them then
 * (reply-headers.ts).
 *
 * Given the events' opening (a promise), the stream is handed to Fastify at once, before
 * the engine's first event: Fastify stages the headers and writes nothing until the first
 * frame, so the work of answering (the handler's return, the onSend hooks, the pipe) is
 * done while the engine thinks, and the first event goes out as soon as it is framed. A
 * failure to open is still an ordinary HTTP error: nothing has been written yet.
 */
export async function sendSse(reply: FastifyReply, events: Events, signal: AbortSignal, options: SseOptions = {}): Promise<FastifyReply> {
  const produced = frames(events, signal, reply, decoratorOf(reply), options.named === true);
  let stream: FrameStream;
  if (events instanceof Promise) {
    // Its rejection is read by the frames, once the pipe pulls them: not an unhandled one meanwhile.
    events.catch(() => {});
    // Headers the meter sets from now on (its admission, the model that served) go onto the staged response too.
    stageHeadersOnRaw(reply);
    stream = new FrameStream(produced, undefined, () => {
      for (const name of [...Object.keys(STREAM_HEADERS), 'trailer']) {
        reply.removeHeader(name);
        reply.raw.removeHeader(name);
      }
    });
  } else {
    stream = new FrameStream(produced, await produced.next());
  }
  const trailers = scopePolicyOf(reply.request)?.trailers;
  if (trailers && trailers.length > 0) reply.header('trailer', trailers.join(', '));
  return reply.code(200).headers(STREAM_HEADERS).send(stream);
}
