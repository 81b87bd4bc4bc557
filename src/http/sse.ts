/**
 * Server-Sent Events out, and the client-disconnect signal that stops work in flight.
 * Each event is written as soon as it is produced (no batching); the stream ends with
 * `data: [DONE]`, or with one `data: {"error": …}` event when it fails after it started.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { toHttpError } from './errors.js';

/** Aborts when the client goes away before the response has been completely written. */
export function clientAbortSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}

async function* frames(events: AsyncIterable<unknown>, signal: AbortSignal, onError: (err: unknown) => void): AsyncGenerator<string> {
  try {
    for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
    yield 'data: [DONE]\n\n';
  } catch (err) {
    if (signal.aborted) return;
    onError(err);
    yield `data: ${JSON.stringify(toHttpError(err).body)}\n\n`;
  }
}

export function sendSse(reply: FastifyReply, events: AsyncIterable<unknown>, signal: AbortSignal): FastifyReply {
  const stream = Readable.from(
    frames(events, signal, (err) => reply.log.warn({ err, request_id: reply.request.id }, 'stream failed after it started')),
    { objectMode: false },
  );
  return reply
    .code(200)
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .send(stream);
}
