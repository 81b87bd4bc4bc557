/**
 * The MCP scope: Sluice's models as MCP tools at `mcp.prefix` (default /mcp) on the main
 * listener. Discovery (`initialize`, `server/discover`, `tools/list`) answers with no
 * credential. A tool call is paid by an API key (`Authorization: Bearer <key>` or
 * `x-api-key`), from project credit with the same holds and per-key rate limit as on /v1;
 * by a storefront agent token or receipt; or, with no credential, per call over x402 when
 * the storefront takes x402 (domain/mcp/paid-calls.ts). A refusal before the SDK runs (a
 * bad key, a body that is not JSON or too large, a rate limit) is answered as a JSON-RPC
 * error, its HTTP status kept.
 */
import { INVALID_REQUEST, INTERNAL_ERROR, PARSE_ERROR } from '@modelcontextprotocol/server';
import type { Meter } from '../../domain/billing/meter.js';
import type { ApiKeyAuthenticator } from '../../domain/identity/authenticator.js';
import type { AppError } from '../../domain/shared/errors.js';
import { ApiKeyStrategy } from '../auth/api-key-strategy.js';
import { McpCallerStrategy } from '../auth/mcp-caller-strategy.js';
import { openAIErrorEnvelope } from '../../wire/openai-errors.js';
import type { HttpError } from '../errors.js';
import { bindRoutes } from '../route-module.js';
import { registerMcpEndpoint, type McpEndpointDeps } from '../routes/mcp/endpoint.js';
import type { ScopeDeclaration } from './api-scope.js';
import { mcpStorefront, resourceMetadataRoute, type McpStorefrontDeps } from './mcp-storefront.js';
import type { ScopeRateLimit } from '../scope-policy.js';
import { API_KEY_SECURITY } from './v1.js';

/** The largest MCP request body: a tool call's arguments are bounded like a REST body. */
export const MCP_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

const PARSE_CODES = new Set(['invalid_json', 'json_too_deep']);

/** A refusal before the SDK runs, as a JSON-RPC error (no id: the request was not read as one). */
export function jsonRpcRefusal(error: AppError, mapped: HttpError): unknown {
  const code = PARSE_CODES.has(error.code ?? '') ? PARSE_ERROR : mapped.status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
  const { message, ...data } = openAIErrorEnvelope(error).error;
  return { jsonrpc: '2.0', id: null, error: { code, message, data: { status: mapped.status, ...data } } };
}

export interface McpScopeDeps {
  prefix: string;
  authenticator: ApiKeyAuthenticator;
  /** Project credit, and the key's budget when it has one (as on /v1). */
  meter: Meter;
  /** The API-key rate limit of /v1, which tool calls count against too. */
  rateLimit: ScopeRateLimit;
  /** The tools' models and services, and the limiter of anonymous requests. */
  endpoint: Pick<McpEndpointDeps, 'models' | 'services' | 'anonymousLimiter' | 'log'>;
  /** The storefront, when it is on: agent tokens, receipts and x402 pay for calls too. */
  storefront: McpStorefrontDeps | null;
}

/** The MCP endpoint's scope, and (with the storefront on) its public RFC 9728 metadata beside it. */
export function mcpScopes(deps: McpScopeDeps): ScopeDeclaration[] {
  const storefront = deps.storefront && mcpStorefront(deps.storefront, deps.prefix);
  const endpoint = bindRoutes(registerMcpEndpoint, {
    ...deps.endpoint,
    serverInfo: { name: 'sluice', version: '1.0.0' },
    bodyLimitBytes: MCP_BODY_LIMIT_BYTES,
    paymentsOf: (request) => storefront?.paymentsOf(request) ?? null,
  });
  const scopes: ScopeDeclaration[] = [
    {
      prefix: deps.prefix,
      strategy: new McpCallerStrategy(new ApiKeyStrategy(deps.authenticator, deps.meter), storefront?.callers ?? null),
      routes: [endpoint],
      policy: { rateLimit: deps.rateLimit, security: API_KEY_SECURITY, errorBody: (_request, error, mapped) => jsonRpcRefusal(error, mapped) },
    },
  ];
  if (deps.storefront) scopes.push({ prefix: '', routes: [resourceMetadataRoute(deps.prefix, deps.storefront.prefix)] });
  return scopes;
}
