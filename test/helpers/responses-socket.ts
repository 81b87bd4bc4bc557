/**
 * A WebSocket client of the Responses API's WebSocket mode for tests, over `ws` (the
 * `openai` SDK's ResponsesWS is used where its behaviour is what is tested): messages are
 * queued as they arrive and read in order; `closed` resolves with the close code and reason.
 */
import WebSocket from 'ws';

export interface SocketClose {
  code: number;
  reason: string;
}

export interface TestSocket {
  ws: WebSocket;
  /** The protocol the server selected ('' for none). */
  protocol: string;
  send(event: unknown): void;
  sendRaw(data: string | Buffer, options?: { binary?: boolean }): void;
  /** The next message, parsed. */
  next(timeoutMs?: number): Promise<Record<string, any>>;
  /** The messages of one response: up to and including `response.completed`/`.incomplete`/`.failed`, or a lone `error`. */
  turn(event: Record<string, unknown>): Promise<Array<Record<string, any>>>;
  closed: Promise<SocketClose>;
  close(): Promise<SocketClose>;
}

const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export const wsUrlOf = (baseUrl: string, path = '/v1/responses'): string => `${baseUrl.replace(/^http/, 'ws')}${path}`;

/** Opens a socket; rejects with the HTTP status when the upgrade is refused (`Unexpected server response: 401`). */
export function openTestSocket(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<TestSocket> {
  const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers });
  const queue: Array<Record<string, any>> = [];
  const waiters: Array<(message: Record<string, any>) => void> = [];
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Record<string, any>;
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const closed = new Promise<SocketClose>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const next = (timeoutMs = 5_000) =>
    new Promise<Record<string, any>>((resolve, reject) => {
      const queued = queue.shift();
      if (queued) return resolve(queued);
      const timer = setTimeout(() => reject(new Error('no message from the WebSocket')), timeoutMs);
      waiters.push((message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
  const socket: TestSocket = {
    ws,
    protocol: '',
    send: (event) => ws.send(JSON.stringify(event)),
    sendRaw: (data, sendOptions) => ws.send(data, { binary: sendOptions?.binary ?? false }),
    next,
    async turn(event) {
      socket.send(event);
      const events: Array<Record<string, any>> = [];
      for (;;) {
        const message = await next();
        events.push(message);
        if (FINAL.has(message.type) && !(message.type === 'error' && message.sequence_number !== undefined)) return events;
      }
    },
    closed,
    close() {
      ws.close();
      return closed;
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(Object.assign(socket, { protocol: ws.protocol })));
    ws.once('error', reject);
  });
}
