/**
 * WebSockets, through @fastify/websocket over `ws` (no hand-written framing). Registered
 * once on the app before the scopes, so a route that declares `websocket: true` takes its
 * upgrade through its scope's hooks (authentication, rate limit) before the socket opens;
 * a refused upgrade is answered as an ordinary HTTP error. One `ws` server serves every
 * socket route, with:
 * - the largest client message, `maxPayload`: `ws` refuses a bigger one from its frame
 *   header, before the message is buffered, closing with 1009;
 * - the subprotocol it selects: the first offered that is not a key
 *   (`openai-insecure-api-key.<key>`), so a browser's key is never echoed back;
 * - its shutdown: each socket closes (1001) once its running answer ends.
 * An upgrade to any other route (one without `config.takesWebSocket`) is refused with an
 * ordinary 400 before its handler runs: @fastify/websocket would otherwise accept it and
 * close the socket at once.
 */
import type { FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import { invalidRequest } from '../../domain/shared/errors.js';
import { KEY_SUBPROTOCOL_PREFIX } from '../auth/api-key-strategy.js';
import type { SocketRegistry } from '../socket/socket-registry.js';

export interface WebSocketOptions {
  maxMessageBytes: number;
  /** The sockets to tell when the server shuts down. */
  registry: SocketRegistry;
}

const selectProtocol = (offered: Set<string>): string | false => {
  for (const protocol of offered) if (!protocol.startsWith(KEY_SUBPROTOCOL_PREFIX)) return protocol;
  return false;
};

/** `ws`'s own refusals of a peer's frames (too large, malformed) close the socket with their code; they are not the server's faults. */
const isProtocolError = (err: unknown): boolean => typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('WS_ERR_');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route takes WebSocket upgrades (its `wsHandler`); every other route refuses them. */
    takesWebSocket?: boolean;
  }
}

export async function registerWebSockets(app: FastifyInstance, options: WebSocketOptions): Promise<void> {
  await app.register(websocket, {
    options: { maxPayload: options.maxMessageBytes, perMessageDeflate: false, handleProtocols: selectProtocol },
    errorHandler(err, socket, request) {
      if (isProtocolError(err)) {
        request.log.info({ err: { message: err.message, code: (err as { code?: string }).code } }, 'a WebSocket peer broke the protocol');
        return;
      }
      request.log.error({ err }, 'WebSocket error');
      socket.terminate();
    },
    preClose(done) {
      options.registry.shutDown();
      done();
    },
  });
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.ws && request.routeOptions.config?.takesWebSocket !== true) {
      done(invalidRequest(`${request.url.split('?')[0]} takes no WebSocket upgrade`, null, 'websocket_not_supported'));
      return;
    }
    done();
  });
}
