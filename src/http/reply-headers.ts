/**
 * The http side of the caller's reply channel (domain/identity/caller.ts ReplyHeaders): what
 * a meter says when it admits or settles a call reaches the client as headers while the
 * answer has not started, and as HTTP trailers once a stream has (only the names its
 * scope declared, which sse.ts announced in `Trailer:`; Node sends them after the last
 * chunk of a chunked answer).
 */
import type { FastifyReply } from 'fastify';
import type { ReplyHeaders } from '../domain/identity/caller.js';
import { scopePolicyOf } from './scope-policy.js';

/** Replies whose stream Fastify already holds, its headers staged on the raw response (sse.ts). */
const stagedOnRaw = new WeakSet<FastifyReply>();

/** From now on, headers set through the reply's channel are set on its raw response as well, until it writes them. */
export function stageHeadersOnRaw(reply: FastifyReply): void {
  stagedOnRaw.add(reply);
}

export class ReplyHeaderChannel implements ReplyHeaders {
  /** The trailers set so far (a stream's events may repeat them, scope-policy.ts streamEventFields). */
  readonly trailers: Record<string, string> = {};

  constructor(private readonly reply: FastifyReply) {}

  set(headers: Readonly<Record<string, string>>): void {
    const { reply } = this;
    if (!reply.sent && !reply.raw.headersSent) {
      reply.headers(headers);
      if (stagedOnRaw.has(reply)) for (const [name, value] of Object.entries(headers)) reply.raw.setHeader(name, value);
      return;
    }
    const declared = scopePolicyOf(reply.request)?.trailers;
    if (!declared || reply.raw.writableEnded) return;
    const trailers: Record<string, string> = {};
    let any = false;
    for (const name of declared) {
      const value = headers[name];
      if (value !== undefined) {
        trailers[name] = value;
        any = true;
      }
    }
    if (any) {
      reply.raw.addTrailers(trailers);
      Object.assign(this.trailers, trailers);
    }
  }
}
