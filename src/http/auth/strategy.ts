/**
 * Authentication strategies: how a mounted scope turns a request into a Caller (who is
 * calling, who pays, and the meter that charges them). Route handlers read the Caller
 * through callerOf() and never learn which strategy admitted it.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../domain/identity/caller.js';

export interface AuthStrategy {
  /**
   * `headers`: decided in onRequest, before any body byte is read, so an unauthenticated
   * client cannot make the server parse anything (API keys, bearer tokens).
   * `raw-body`: decided once the body has arrived, from its exact bytes
   * (`request.rawBody`), before validation and the handler; the JSON body is parsed from
   * those same bytes (a signature over the request body).
   */
  readonly needs: 'headers' | 'raw-body';
  /**
   * The caller, or an AppError thrown (or rejected) when the request is not admitted.
   * May answer synchronously: this runs on every request. `null` admits the request with
   * no caller yet, unmetered and not rate-limited: only a strategy whose scope serves
   * some requests anonymously returns it (MCP discovery), and that scope's routes refuse
   * what needs a caller themselves (`request.caller` stays null; `callerOf` throws).
   */
  authenticate(request: FastifyRequest): Caller | null | Promise<Caller | null>;
}

/** The first value of a header, or undefined when absent or empty. */
export function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}
