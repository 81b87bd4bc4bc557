/**
 * What a client message on a wire's WebSocket is (one JSON text message per event, its
 * `type` naming it), and the `error` event that answers one the socket cannot take:
 * `{ type: "error", status, error: { … } }`, the body of the error as the route's wire
 * would answer it over HTTP, with the status it would have had (OpenAI's WebSocket error
 * event). Refusing a message leaves the socket open.
 */
import type { FastifyRequest } from 'fastify';
import type { RawData } from 'ws';
import { invalidRequest } from '../../domain/shared/errors.js';
import { toHttpError } from '../errors.js';
import { errorContextOf } from '../route-errors.js';

type Json = Record<string, unknown>;

/** The names of a socket's close codes (RFC 6455 §7.4.1), as docs/responses.md lists them. */
export const CLOSE_CODES = { normal: 1000, goingAway: 1001, policy: 1008, tooBig: 1009, internal: 1011 } as const;

const shown = (type: string): string => (type.length > 64 ? `${type.slice(0, 64)}…` : type);

/** A client event: an object with a string `type`; anything else is refused with why. */
export function clientEventOf(data: RawData, isBinary: boolean): Json & { type: string } {
  if (isBinary) throw invalidRequest('Binary messages are not supported: send each event as a JSON text message', null, 'invalid_message');
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw invalidRequest('The message is not valid JSON: send each event as a JSON object', null, 'invalid_json');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw invalidRequest('An event must be a JSON object', null, 'invalid_event');
  const { type } = event as Json;
  if (typeof type !== 'string') throw invalidRequest('An event must have a string `type`', 'type', 'invalid_event');
  return event as Json & { type: string };
}

export const unknownEventType = (type: string, expected: string) =>
  invalidRequest(`Unknown event type "${shown(type)}": this WebSocket takes "${expected}"`, 'type', 'unknown_event_type');

/** The event's own fields (`envelope`) and the rest, the body. */
export function splitEvent(event: Json, envelope: readonly string[]): { envelope: Json; body: Json } {
  const own: Json = {};
  const body: Json = {};
  for (const [name, value] of Object.entries(event)) {
    if (envelope.includes(name)) own[name] = value;
    else body[name] = value;
  }
  return { envelope: own, body };
}

/** The `error` event of `err` on `request`'s route, and whether it is the server's fault (to log). */
export function errorEventOf(request: FastifyRequest, err: unknown): { event: Json; serverFault: boolean; kind: string } {
  const mapped = toHttpError(err, errorContextOf(request));
  const body = mapped.body !== null && typeof mapped.body === 'object' ? (mapped.body as Json) : { error: { message: String(mapped.body) } };
  return { event: { type: 'error', status: mapped.status, ...body }, serverFault: mapped.serverFault, kind: mapped.error.kind };
}
