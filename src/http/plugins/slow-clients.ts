/**
 * Requests whose body stalls or is refused unread.
 *
 * - Body idle timeout: while a body is being received, a silence longer than
 *   `bodyIdleMs` answers 408 in the envelope and closes the connection. Only the upload
 *   is timed: once the body is read, the answer (a long inference, a stream) is not.
 *   The whole-request and header timeouts are Node's own (`requestTimeout`,
 *   `headersTimeout`, set in app.ts) and answer through client-errors.ts.
 * - An error answered before its body was read (413 above all): the rest of the body is
 *   drained (bounded, linger.ts) before the answer and `connection: close`, so the
 *   client reads its answer instead of a reset.
 */
import type { FastifyInstance } from 'fastify';
import { envelopeOf } from './client-errors.js';
import { drainBody } from '../linger.js';
import { hasBody } from '../raw-body.js';

export function registerSlowClientGuards(app: FastifyInstance, bodyIdleMs: number): void {
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (!hasBody(raw)) {
      done();
      return;
    }
    raw.setTimeout(bodyIdleMs, () => {
      if (raw.complete) return;
      request.log.info({ reqId: request.id, bodyIdleMs }, 'request body stalled; answering 408');
      if (reply.sent || reply.raw.headersSent) {
        raw.socket.destroy();
        return;
      }
      const error = {
        status: 408,
        code: 'request_timeout',
        message: `No part of the request body arrived for ${bodyIdleMs} ms; send the body without pausing`,
      };
      // The body parser is still waiting on this request: take the reply over from Fastify.
      reply.hijack();
      const body = JSON.stringify(envelopeOf(error));
      reply.raw.writeHead(408, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': request.id,
        connection: 'close',
      });
      reply.raw.end(body);
    });
    // The body is in: from here on only the answer takes time, and that is not timed.
    raw.once('end', () => raw.setTimeout(0));
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode < 400 || request.raw.complete || reply.raw.headersSent) {
      done(null, payload);
      return;
    }
    reply.header('connection', 'close');
    void drainBody(request.raw).then(() => done(null, payload));
  });
}
