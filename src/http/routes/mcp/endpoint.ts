/**
 * POST on the MCP scope's prefix: the Streamable HTTP endpoint, served by the official
 * SDK's `createMcpHandler`, which answers the 2026-07-28 revision (stateless, every request
 * carries its protocol version, `server/discover`) and the 2025-11-25 `initialize` era
 * (stateless fallback) from one server factory. Fastify reads and bounds the body as on
 * every route; the SDK gets it parsed and frames every JSON-RPC answer.
 *
 * The SDK builds one server per HTTP request; what the request's caller may do reaches the
 * tools through the handler's `authInfo` (the SDK passes it through untouched).
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createMcpHandler, McpServer, type AuthInfo } from '@modelcontextprotocol/server';
import { McpToolCatalogue, type ModelReadiness, type ToolOffer } from '../../../domain/mcp/tool-catalogue.js';
import type { McpPayments } from '../../../domain/mcp/paid-calls.js';
import { AppError } from '../../../domain/shared/errors.js';
import { clientAbortSignal } from '../../sse.js';
import { documentOnly } from '../../schemas/document-only.js';
import { JsonRpcRequest, JsonRpcResponse } from '../../schemas/mcp.js';
import { toolDefinitions, type McpToolServices, type ToolCall, type ToolDefinition } from './tools.js';
import { mergedTags, TAGS_HEADER } from '../../../domain/billing/call-tags.js';
import { headerTags } from '../../../wire/call-labels.js';
import type { RequestLogSink } from '../../../domain/request-log/request-log.port.js';

/** Exactly what the endpoint needs. */
export interface McpEndpointDeps {
  /** The models and their readiness, which the tools follow. */
  models: ModelReadiness;
  services: McpToolServices;
  /** The server's name and version in `initialize` / `server/discover`. */
  serverInfo: { name: string; version: string };
  /** Largest request body, in bytes (arguments included). */
  bodyLimitBytes: number;
  /** Per-call x402 payment for this request's seller; null when the storefront takes no x402. */
  paymentsOf(request: FastifyRequest): McpPayments | null;
  /**
   * Counts requests that present no credential, by client address: the scope's rate limit
   * counts callers, and these have none yet.
   */
  anonymousLimiter: { consume(key: string): RateDecision | Promise<RateDecision> };
  /** Where each tool call of a model is logged (read per call: the request-log feature binds it). */
  log: { readonly value: RequestLogSink };
}

/** What the limiter answers for one request. */
interface RateDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/** The key of the tool call context in `authInfo.extra`. */
const CALL = 'sluice/call';

export function registerMcpEndpoint(scope: FastifyInstance, deps: McpEndpointDeps): void {
  const definitions = new WeakMap<readonly ToolOffer[], ToolDefinition[]>();
  // Open `subscriptions/listen` streams (2026-07-28) hear when a model becomes ready or goes away.
  const catalogue = new McpToolCatalogue(deps.models, () => handler.notify.toolsChanged());
  const definitionsOf = async (): Promise<ToolDefinition[]> => {
    const offers = await catalogue.offers();
    let defined = definitions.get(offers);
    if (!defined) definitions.set(offers, (defined = toolDefinitions(offers, deps.services, deps.log)));
    return defined;
  };

  const handler = createMcpHandler(
    async (context) => {
      const server = new McpServer(deps.serverInfo);
      const call = context.authInfo?.extra?.[CALL] as ToolCall | undefined;
      const tools = await definitionsOf();
      // A tools/call needs only its tool (registering all of them is most of the server's set-up),
      // and not its advertised schema (tools.ts, `callConfig`).
      const called = call?.toolName === undefined ? undefined : tools.find((t) => t.name === call.toolName);
      for (const tool of called ? [called] : tools) {
        server.registerTool(tool.name, called ? tool.callConfig : tool.config, (args: unknown, ctx) =>
          tool.run(args as Record<string, unknown>, ctx.http?.authInfo?.extra?.[CALL] as ToolCall, ctx.mcpReq._meta),
        );
      }
      return server;
    },
    { legacy: 'stateless', onerror: (err) => scope.log.debug({ err }, 'mcp request refused') },
  );
  // The SDK's handler closes with the app: a child scope of this module's own carries the hook.
  void scope.register(async (own) => own.addHook('onClose', async () => handler.close()));

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.caller) {
      const decision = await deps.anonymousLimiter.consume(`mcp-anonymous:${request.ip}`);
      if (!decision.allowed) throw anonymousLimited(decision.retryAfterSeconds);
    }
    const tags = mergedTags(headerTags(request.headers[TAGS_HEADER]), [], request.caller?.principal.policy?.tags, TAGS_HEADER);
    const call: ToolCall = {
      toolName: calledTool(request.body),
      request,
      caller: request.caller,
      payments: request.caller ? null : deps.paymentsOf(request),
      requestId: request.id,
      signal: clientAbortSignal(reply),
      onFault: (err) => request.log.error({ err }, 'mcp tool call failed'),
      ...(tags ? { tags } : {}),
    };
    const authInfo: AuthInfo = { token: '', clientId: request.caller?.principal.keyId ?? '', scopes: [], extra: { [CALL]: call } };
    const parsed = request.method === 'POST' ? { parsedBody: request.body } : {};
    const response = await handler.fetch(webRequestOf(request), { authInfo, ...parsed });
    return sendResponse(reply, response);
  };
  scope.post('', { bodyLimit: deps.bodyLimitBytes, schema, ...documentOnly }, serve);
  // Session operations of the 2025 transport: the stateless endpoint answers them 405, as the SDK does.
  scope.route({ method: ['GET', 'DELETE'], url: '', schema: { hide: true }, handler: serve });
}

const schema = {
  tags: ['mcp'],
  summary: 'Model Context Protocol (Streamable HTTP): the models as tools; discovery needs no credential, tool calls an API key',
  body: JsonRpcRequest,
  response: { 200: JsonRpcResponse },
};

const anonymousLimited = (retryAfterSeconds: number) =>
  new AppError('rate_limit', 'Rate limit exceeded: too many requests per minute without a credential from this address', {
    code: 'rate_limit_exceeded',
    retryAfterSeconds,
  });

/** The tool a single `tools/call` message names, if any. */
function calledTool(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  return method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
}

/** Headers the SDK never reads: the credential is the scope's, passed as `authInfo`. */
const UNREAD_HEADERS: ReadonlySet<string> = new Set(['content-length', 'authorization', 'x-api-key', 'cookie', 'x-project-id']);

/** The request as the SDK reads it: method, URL and the headers it reads; the body is passed parsed. */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || UNREAD_HEADERS.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  // No body: the SDK is handed the parsed one (a body stream would cost more than the whole request).
  return new Request(`http://${request.host || 'localhost'}${request.url}`, { method: request.method, headers });
}

/** The SDK's answer on the Fastify reply: a JSON body as text, an event stream as a stream. */
async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.status(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'connection') reply.header(name, value);
  });
  const type = response.headers.get('content-type') ?? '';
  if (response.body && type.startsWith('text/event-stream')) {
    return reply.send(Readable.fromWeb(response.body as unknown as NodeReadableStream));
  }
  return reply.send(response.body ? await bytesOf(response.body) : '');
}

/** A body's bytes as one Buffer: the SDK's JSON answer arrives as a single chunk, sent on as it is (no decode to text and encode again). */
async function bytesOf(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
