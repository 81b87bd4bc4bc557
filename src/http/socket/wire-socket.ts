/**
 * One WebSocket on a wire's path (WireSocket, src/wire/wire-format.ts), after its upgrade
 * was admitted by the scope's strategy. Each client event the wire names (e.g.
 * `response.create`) is one request through the same pipeline as over HTTP: the caller
 * admitted again (rate limit included), the body validated by the route's own validator,
 * the answer opened by the wire's service (holds, routing, settlement, usage records),
 * and its events sent as JSON text messages. One answer runs at a time. Limits, each with
 * its close code (socket-messages.ts CLOSE_CODES, docs/responses.md): idle time, age, and
 * sockets per key; a key that stops being valid closes its sockets at the next check.
 * The framing is `ws`'s (through @fastify/websocket); this file only speaks events.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { rateLimitKeyOf, type Caller } from '../../domain/identity/caller.js';
import { AppError } from '../../domain/shared/errors.js';
import { newRequestId } from '../../domain/shared/ids.js';
import { ResponseSession } from '../../domain/responses/response-session.js';
import { parseBody } from '../../wire/validate.js';
import type { WireCallContext, WireFormat, WireServices, WireSocket } from '../../wire/wire-format.js';
import { agentSessionOf } from '../agent-session.js';
import { labelCall } from '../call-labels.js';
import { admitAgain, callerOf } from '../auth/caller-auth.js';
import { CLOSE_CODES, clientEventOf, errorEventOf, splitEvent, unknownEventType } from './socket-messages.js';
import type { SocketRegistry } from './socket-registry.js';
import type { CallStory } from '../../domain/request-log/call-story.js';
import type { RequestLogSink } from '../../domain/request-log/request-log.port.js';
import { statusOfError } from '../../domain/request-log/error-status.js';
import { openCallStory, tapStory, wireNameOf, type StoryRoute } from '../call-story.js';

export interface SocketLimits {
  idleTimeoutMs: number;
  maxAgeMs: number;
  maxPerKey: number;
  /** How often a socket checks that its caller's credentials still hold. */
  recheckMs: number;
}

export interface WireSocketDeps {
  format: WireFormat & { socket: WireSocket<unknown> };
  services: WireServices;
  limits: SocketLimits;
  registry: SocketRegistry;
  /** The usage records' route. */
  route: string;
  /** Where each answer's call is logged. */
  log: { readonly value: RequestLogSink };
}

/** Sends wait for the peer once this much is queued (a slow reader holds back its own answer only). */
const HIGH_WATER_BYTES = 1024 * 1024;

const busy = () => new AppError('conflict', 'A response is already running on this WebSocket: wait for it to end, or open another WebSocket', { code: 'response_in_progress' });
const tooMany = (max: number) =>
  new AppError('rate_limit', `Too many WebSockets open for this API key (at most ${max} at once)`, { code: 'websocket_limit_reached' });
const tooOld = () =>
  new AppError('invalid_request', 'This WebSocket reached its maximum age: open a new one to continue', { code: 'websocket_connection_limit_reached' });

const isCredentialRefusal = (kind: string) => kind === 'authentication' || kind === 'permission';

export class WireSocketConnection {
  readonly #session = new ResponseSession();
  readonly #abort = new AbortController();
  readonly #key: string;
  readonly #timers: NodeJS.Timeout[] = [];
  #running = false;
  #closed = false;
  /** Set when the socket should close once the running answer ends. */
  #closeAfterRun: (() => void) | null = null;
  #lastActivity = Date.now();
  readonly #where: StoryRoute;

  constructor(
    private readonly socket: WebSocket,
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly deps: WireSocketDeps,
  ) {
    this.#key = rateLimitKeyOf(callerOf(request).principal);
    this.#where = { route: deps.route, wire: wireNameOf(deps.format.path), scope: 'v1' };
  }

  /** Starts serving the socket; closes it at once when its key holds too many. */
  open(): void {
    const { socket, deps } = this;
    socket.on('close', () => this.#closedByEither());
    if (!deps.registry.add(this.#key, this, deps.limits.maxPerKey)) {
      this.#refuseAndClose(tooMany(deps.limits.maxPerKey), CLOSE_CODES.policy, 'websocket_limit_reached');
      return;
    }
    socket.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    const { idleTimeoutMs, maxAgeMs, recheckMs } = deps.limits;
    this.#timers.push(setInterval(() => this.#checkIdle(), Math.max(10, Math.min(idleTimeoutMs / 4, 5_000))));
    this.#timers.push(setTimeout(() => this.#whenIdle(() => this.#refuseAndClose(tooOld(), CLOSE_CODES.normal, 'websocket_connection_limit_reached')), maxAgeMs));
    this.#timers.push(setInterval(() => void this.#recheck(), recheckMs));
  }

  shutDown(): void {
    this.#whenIdle(() => this.#close(CLOSE_CODES.goingAway, 'server_shutting_down'));
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    this.#lastActivity = Date.now();
    const { createEvent } = this.deps.format.socket;
    let event: ReturnType<typeof clientEventOf>;
    try {
      event = clientEventOf(data, isBinary);
      if (event.type !== createEvent) throw unknownEventType(event.type, createEvent);
      if (this.#running) throw busy();
    } catch (err) {
      this.#sendError(err);
      return;
    }
    this.#running = true;
    void this.#answer(event).finally(() => this.#ran());
  }

  /** One client event answered: admitted, validated, opened, and its events sent. */
  async #answer(event: Record<string, unknown>): Promise<void> {
    const { format, services, route } = this.deps;
    const requestId = newRequestId();
    let story: CallStory | null = null;
    let status = 200;
    try {
      const { envelope, body } = splitEvent(event, format.socket.envelope);
      const caller = await this.#admit(true);
      const parsed = parseBody(format.body, body);
      story = openCallStory(this.deps.log.value, this.#where, { id: requestId, request: this.request, caller, body: parsed, stream: true });
      const context: WireCallContext = { requestId, signal: this.#abort.signal, route, session: this.#session, story };
      const sessionId = agentSessionOf(this.request);
      if (sessionId !== undefined) context.sessionId = sessionId;
      labelCall(context, this.request, format, parsed, caller.principal);
      const events = await tapStory(story, format.socket.open(services, caller, parsed, envelope, context));
      for await (const out of events) {
        if (this.#closed) break;
        await this.#send(out);
      }
    } catch (err) {
      status = statusOfError(err);
      story?.failedWith(err);
      if (this.#closed) return;
      const kind = this.#sendError(err, requestId);
      if (isCredentialRefusal(kind)) this.#close(CLOSE_CODES.policy, 'invalid_credentials');
    } finally {
      if (story) this.deps.log.value.submit(story, status);
    }
  }

  #ran(): void {
    this.#running = false;
    this.#lastActivity = Date.now();
    const after = this.#closeAfterRun;
    this.#closeAfterRun = null;
    after?.();
  }

  /** The caller admitted again by the scope's strategy: its own, without the upgrade's reply channel. */
  async #admit(counted: boolean): Promise<Caller> {
    const { principal, meter } = await admitAgain(this.request, this.reply, counted);
    return { principal, meter };
  }

  /** A key revoked (or a project gone) since the last check closes the socket; anything else is checked again later. */
  async #recheck(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#admit(false);
    } catch (err) {
      if (this.#closed || !(err instanceof AppError) || !isCredentialRefusal(err.kind)) return;
      this.#refuseAndClose(err, CLOSE_CODES.policy, 'invalid_credentials');
    }
  }

  #checkIdle(): void {
    if (this.#running || this.#closed) return;
    if (Date.now() - this.#lastActivity >= this.deps.limits.idleTimeoutMs) this.#close(CLOSE_CODES.normal, 'idle_timeout');
  }

  /** Runs `then` now when nothing runs, else once the running answer ends. */
  #whenIdle(then: () => void): void {
    if (this.#running) this.#closeAfterRun = then;
    else then();
  }

  #send(event: unknown): Promise<void> | void {
    const data = JSON.stringify(event);
    if (this.socket.bufferedAmount < HIGH_WATER_BYTES) {
      this.socket.send(data);
      return;
    }
    return new Promise((resolve) => this.socket.send(data, () => resolve()));
  }

  /** Sends the error event of `err`; returns its kind. */
  #sendError(err: unknown, requestId?: string): string {
    const { event, serverFault, kind } = errorEventOf(this.request, err);
    if (serverFault) this.request.log.error({ err, request_id: requestId }, 'a WebSocket request failed');
    if (!this.#closed) void this.#send(event);
    return kind;
  }

  #refuseAndClose(err: unknown, code: number, reason: string): void {
    this.#sendError(err);
    this.#close(code, reason);
  }

  #close(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closedByEither();
    this.socket.close(code, reason);
  }

  /** Either side closed: nothing more is sent, the running answer stops (billed for what it delivered). */
  #closedByEither(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#abort.abort(new Error('the WebSocket closed'));
    this.deps.registry.remove(this.#key, this);
  }
}
