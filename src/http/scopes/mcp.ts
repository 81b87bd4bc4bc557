/**
 * The MCP scope: Sluice's models as MCP tools at `mcp.prefix` (default /mcp) on the main
 * listener. Discovery (`initialize`, `server/discover`, `tools/list`) answers with no
 * credential. A tool call is paid by an API key (`Authorization: Bearer <key>` or
 * `x-api-key`), from project credit with the same holds and per-key rate limit as on /v1;
 * with no credential, a model tool's call may be paid per call over x402 when the
 * storefront takes x402 (domain/mcp/paid-calls.ts). A refusal before the SDK runs (a bad
 * key, a body that is not JSON or too large, a rate limit) is answered as a JSON-RPC
 * error, its HTTP status kept.
 */
import { INVALID_REQUEST, INTERNAL_ERROR, PARSE_ERROR } from '@modelcontextprotocol/server';
import type { Container } from '../../container.js';
import type { AppError } from '../../domain/shared/errors.js';
import { ApiKeyStrategy } from '../auth/api-key-strategy.js';
import { McpCallerStrategy } from '../auth/mcp-caller-strategy.js';
import type { AuthStrategy } from '../auth/strategy.js';
import { errorEnvelope, type HttpError } from '../errors.js';
import type { RouteModule } from '../routes/api-scope.js';
import { registerMcpEndpoint } from '../routes/mcp/endpoint.js';
import { API_KEY_SECURITY } from '../routes/v1/index.js';
import type { ScopePolicy } from '../scope-policy.js';
import { mcpStorefront, registerResourceMetadata } from './mcp-storefront.js';

/** The largest MCP request body: a tool call's arguments are bounded like a REST body. */
export const MCP_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

const PARSE_CODES = new Set(['invalid_json', 'json_too_deep']);

/** A refusal before the SDK runs, as a JSON-RPC error (no id: the request was not read as one). */
export function jsonRpcRefusal(error: AppError, mapped: HttpError): unknown {
  const code = PARSE_CODES.has(error.code ?? '') ? PARSE_ERROR : mapped.status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
  const { message, ...data } = errorEnvelope(error).error;
  return { jsonrpc: '2.0', id: null, error: { code, message, data: { status: mapped.status, ...data } } };
}

export const mcpScope = {
  prefix: (container: Container): string => container.config.mcp.prefix,
  strategy: (container: Container): AuthStrategy =>
    new McpCallerStrategy(new ApiKeyStrategy(container.authenticator, container.creditMeter), mcpStorefront(container)?.callers ?? null),
  policy: { security: API_KEY_SECURITY, errorBody: (_request, error, mapped) => jsonRpcRefusal(error, mapped) } satisfies Omit<ScopePolicy, 'rateLimit'>,
  routes: [
    (scope, container) =>
      registerMcpEndpoint(scope, {
        models: container.registry,
        services: {
          chat: container.inference.chatCompletions,
          embeddings: container.inference.embeddings,
          moderations: container.inference.moderations,
          decision: container.decision,
          batches: container.batches,
        },
        serverInfo: { name: 'sluice', version: '1.0.0' },
        bodyLimitBytes: MCP_BODY_LIMIT_BYTES,
        paymentsOf: (request) => mcpStorefront(container)?.paymentsOf(request) ?? null,
        anonymousLimiter: container.rateLimiter,
      }),
  ] satisfies RouteModule[],
  /** Routes outside the scope, on the app itself: the RFC 9728 metadata, public. */
  registerPublic: registerResourceMetadata,
};

