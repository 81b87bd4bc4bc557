/**
 * The WebSocket of a wire format that has a WebSocket mode (its `socket`, e.g. the
 * Responses API's): `GET <path>` with an upgrade, admitted by the scope like any request,
 * then served by a WireSocketConnection (src/http/socket/wire-socket.ts). A plain GET
 * without an upgrade is told what the path takes. Mounted on `/v1` only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { v1PathOf, type WireFormat, type WireServices, type WireSocket } from '../../../wire/wire-format.js';
import { bindRoutes, type BoundRoutes } from '../../route-module.js';
import type { SocketRegistry } from '../../socket/socket-registry.js';
import { WireSocketConnection, type SocketLimits, type WireSocketDeps } from '../../socket/wire-socket.js';

export interface WireSocketRouteDeps {
  format: WireFormat & { socket: WireSocket<unknown> };
  services: WireServices;
  limits: SocketLimits;
  registry: SocketRegistry;
  log: WireSocketDeps['log'];
}

export function registerWireSocketRoute(scope: FastifyInstance, { format, services, limits, registry, log }: WireSocketRouteDeps): void {
  const replies = new WeakMap<FastifyRequest, FastifyReply>();
  const route = v1PathOf(format);
  scope.route({
    method: 'GET',
    url: format.path,
    schema: { hide: true },
    config: { takesWebSocket: true, ...(format.errors ? { wireErrors: format.errors } : {}) },
    // The connection admits its caller again per event, through the upgrade's reply.
    preHandler: (request, reply, done) => {
      replies.set(request, reply);
      done();
    },
    handler: async () => {
      throw invalidRequest(`GET ${route} takes a WebSocket upgrade only; send a request with POST ${route}`, null, 'websocket_upgrade_required');
    },
    wsHandler: (socket, request) => {
      request.answered(101);
      new WireSocketConnection(socket, request, replies.get(request)!, { format, services, limits, registry, route, log }).open();
    },
  });
}

/** The socket routes of the formats that have one. */
export function bindWireSocketRoutes(
  formats: readonly WireFormat[],
  services: WireServices,
  limits: SocketLimits,
  registry: SocketRegistry,
  log: WireSocketDeps['log'],
): BoundRoutes[] {
  return formats
    .filter((format): format is WireFormat & { socket: WireSocket<unknown> } => format.socket !== undefined)
    .map((format) => bindRoutes(registerWireSocketRoute, { format, services, limits, registry, log }));
}
