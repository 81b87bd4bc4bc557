/**
 * What the MCP scope takes from the storefront, when it is on: its agent tokens and
 * receipts as callers (through the storefront's own per-seller meters), its x402 and MPP rails and
 * ledger for calls paid per call, and the RFC 9728 metadata that names it the
 * authorization server of agent tokens.
 */
import type { FastifyRequest } from 'fastify';
import { McpPayments } from '../../domain/mcp/paid-calls.js';
import type { TokenPrice } from '../../domain/shared/money.js';
import type { AgentTokenService } from '../../domain/storefront/agent-tokens.port.js';
import type { PurchaseService } from '../../domain/storefront/purchases.js';
import type { Seller, SellerDirectory } from '../../domain/storefront/sellers.js';
import type { StorefrontMeter } from '../../domain/storefront/storefront-meter.js';
import type { StorefrontCallers } from '../auth/mcp-caller-strategy.js';
import { tokenAudience } from '../auth/storefront-context.js';
import type { BoundRoutes } from '../route-module.js';
import { ProtectedResourceMetadata } from '../schemas/mcp.js';

/** The storefront's parts the MCP scope uses. */
export interface McpStorefrontDeps {
  /** The storefront's prefix (its token endpoint is the authorization server). */
  prefix: string;
  /** It takes payments per call: x402 or MPP is one of its rails. */
  takesPerCall: boolean;
  sellers: SellerDirectory;
  meterOf(seller: Seller): StorefrontMeter;
  tokens: AgentTokenService;
  purchases: PurchaseService;
  priceOf(model: string): TokenPrice;
}

export interface McpStorefront {
  callers: StorefrontCallers;
  /** Per-call payment (x402, MPP) for the request's seller; null when the storefront takes neither. */
  paymentsOf(request: FastifyRequest): McpPayments | null;
}

/** The path of the endpoint's protected-resource metadata (RFC 9728). */
export const resourceMetadataPath = (mcpPrefix: string): string => `/.well-known/oauth-protected-resource${mcpPrefix}`;

const originOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;

export function mcpStorefront(storefront: McpStorefrontDeps, mcpPrefix: string): McpStorefront {
  const sellerAt = (host: string) => {
    const seller = storefront.sellers.forHost(host);
    return seller ? { seller, meter: storefront.meterOf(seller) } : null;
  };
  return {
    callers: {
      tokens: storefront.tokens,
      sellerAt,
      audienceOf: tokenAudience,
      resourceMetadataUrlOf: (request) => `${originOf(request)}${resourceMetadataPath(mcpPrefix)}`,
    },
    paymentsOf(request) {
      if (!storefront.takesPerCall) return null;
      const at = sellerAt(request.host);
      const plan = at?.seller.plans.values().next().value;
      if (!at || !plan) return null;
      const origin = originOf(request);
      return new McpPayments({
        purchases: storefront.purchases,
        seller: at.seller,
        planId: plan.id,
        meter: at.meter,
        priceOf: storefront.priceOf,
        resourceUrl: `${origin}${mcpPrefix}`,
        storefrontUrl: `${origin}${storefront.prefix}`,
      });
    },
  };
}

/**
 * `GET /.well-known/oauth-protected-resource/mcp` (RFC 9728), public: the storefront is
 * the authorization server of agent access tokens (its `POST /oauth2/token`, RFC 7523
 * JWT-bearer grant). Mounted only with the storefront on: otherwise only API keys call.
 */
export const resourceMetadataRoute =
  (mcpPrefix: string, storefrontPrefix: string): BoundRoutes =>
  (scope) => {
    const schema = { tags: ['mcp'], summary: 'Protected-resource metadata of the MCP endpoint (RFC 9728)', response: { 200: ProtectedResourceMetadata } };
    scope.get(resourceMetadataPath(mcpPrefix), { schema }, async (request, reply) => {
      const origin = originOf(request);
      reply.header('cache-control', 'max-age=300');
      return {
        resource: `${origin}${mcpPrefix}`,
        authorization_servers: [`${origin}${storefrontPrefix}`],
        bearer_methods_supported: ['header'],
        resource_name: 'Sluice MCP tools',
      };
    });
  };
