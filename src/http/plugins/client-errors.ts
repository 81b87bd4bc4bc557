/**
 * Errors raised before routing, answered in the spec's envelope with an `x-request-id`:
 *
 * - Node's HTTP parser (`clientError`): malformed request lines and headers, bad
 *   Content-Length or chunk sizes, Transfer-Encoding with Content-Length, lowercase
 *   methods (400), headers or URL over 16 KB (431), a request not received in time (408).
 * - `Expect` other than 100-continue (417; Node would answer an empty 417).
 * - An HTTP/1.1 request with no Host (400; Node would answer an empty 400). Node's own
 *   check is off (`requireHostHeader: false` in app.ts) so this hook can answer it.
 *
 * These answers are written to the socket by hand: no Fastify request exists yet.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { newRequestId } from '../../domain/shared/ids.js';
import { AppError } from '../../domain/shared/errors.js';
import { openAIRequestFault, type OpenAIErrorEnvelope } from '../../wire/openai-errors.js';
import { closeAfterAnswer } from '../linger.js';

interface TransportError {
  status: number;
  code: string;
  message: string;
}

/** llhttp's error codes → what the client did wrong. */
const PARSE_ERRORS = new Map<string, string>([
  ['HPE_INVALID_METHOD', 'unknown HTTP method (methods are upper case, e.g. POST)'],
  ['HPE_INVALID_HEADER_TOKEN', 'invalid character in a header name or value'],
  ['HPE_INVALID_CONTENT_LENGTH', 'invalid Content-Length header'],
  ['HPE_UNEXPECTED_CONTENT_LENGTH', 'Content-Length given together with Transfer-Encoding or twice'],
  ['HPE_INVALID_TRANSFER_ENCODING', 'invalid Transfer-Encoding header'],
  ['HPE_INVALID_CHUNK_SIZE', 'invalid chunk size in a chunked body'],
  ['HPE_INVALID_URL', 'invalid request target'],
  ['HPE_INVALID_VERSION', 'invalid HTTP version'],
  ['HPE_INVALID_CONSTANT', 'malformed request line'],
  ['HPE_LF_EXPECTED', 'malformed line ending'],
  ['HPE_CR_EXPECTED', 'malformed line ending'],
  ['HPE_STRICT', 'malformed request'],
]);

export function describeClientError(err: NodeJS.ErrnoException): TransportError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, code: 'request_timeout', message: 'The request was not received in time; send it again without pausing' };
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, code: 'headers_too_large', message: 'The request line and headers exceed 16384 bytes' };
  }
  const what = (err.code && PARSE_ERRORS.get(err.code)) ?? 'the request could not be parsed as HTTP/1.1';
  return { status: 400, code: 'malformed_request', message: `Malformed HTTP request: ${what}` };
}

export const envelopeOf = (error: TransportError): OpenAIErrorEnvelope => openAIRequestFault(error.message, error.code);

/** The whole response as bytes, `connection: close`: the stream cannot be trusted after a parse error. */
export function rawResponse(error: TransportError, requestId: string): string {
  const body = JSON.stringify(envelopeOf(error));
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** Fastify's `clientErrorHandler` option. */
export function handleClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = newRequestId();
  const error = describeClientError(err);
  this.log.info({ reqId: requestId, status: error.status, code: err.code }, 'malformed request refused');
  // A response already started on this socket cannot be followed by another.
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !pending?.headersSent) socket.write(rawResponse(error, requestId));
  closeAfterAnswer(socket);
}

export function registerClientErrors(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const error = { status: 417, code: 'expectation_failed', message: 'Only "Expect: 100-continue" is supported' };
    const body = JSON.stringify(envelopeOf(error));
    response.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': newRequestId(),
      connection: 'close',
    });
    response.end(body);
    request.resume();
  });

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      done(new AppError('invalid_request', 'The Host header is required in HTTP/1.1', { code: 'missing_host' }));
      return;
    }
    done();
  });
}
