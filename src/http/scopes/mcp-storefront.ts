/**
 * What the MCP scope takes from the storefront, when it is on: its agent tokens and
 * receipts as callers, and its x402 rail and ledger for calls paid per call. Each seller
 * gets one storefront meter here, on the same reservation book as the storefront's own.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.js';
import { McpPayments } from '../../domain/mcp/paid-calls.js';
import type { Seller } from '../../domain/storefront/sellers.js';
import { StorefrontMeter } from '../../domain/storefront/storefront-meter.js';
import type { StorefrontCallers } from '../auth/mcp-caller-strategy.js';
import { tokenAudience } from '../routes/storefront/context.js';
import { ProtectedResourceMetadata } from '../schemas/mcp.js';

export interface McpStorefront {
  callers: StorefrontCallers;
  /** Per-call x402 payment for the request's seller; null when the storefront takes no x402. */
  paymentsOf(request: FastifyRequest): McpPayments | null;
}

/** The path of the endpoint's protected-resource metadata (RFC 9728). */
export const resourceMetadataPath = (mcpPrefix: string): string => `/.well-known/oauth-protected-resource${mcpPrefix}`;

const originOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;

const built = new WeakMap<Container, McpStorefront | null>();

/** One per container: the strategy and the routes share its meters. */
export function mcpStorefront(container: Container): McpStorefront | null {
  if (!built.has(container)) built.set(container, create(container));
  return built.get(container)!;
}

function create(container: Container): McpStorefront | null {
  const { storefront, config } = container;
  if (!storefront) return null;
  const meters = new Map<string, StorefrontMeter>();
  const meterDeps = {
    store: storefront.store,
    reservations: storefront.reservations,
    priceOf: (model: string) => config.models[model]?.price ?? { inputPerMillionUsd: 0, outputPerMillionUsd: 0 },
    clock: container.clock,
    usage: container.billing,
    basePath: storefront.config.prefix,
  };
  const meterOf = (seller: Seller) => {
    let meter = meters.get(seller.id);
    if (!meter) meters.set(seller.id, (meter = new StorefrontMeter(seller, meterDeps)));
    return meter;
  };
  const sellerAt = (host: string) => {
    const seller = storefront.sellers.forHost(host);
    return seller ? { seller, meter: meterOf(seller) } : null;
  };
  return {
    callers: {
      tokens: storefront.tokens,
      sellerAt,
      audienceOf: tokenAudience,
      resourceMetadataUrlOf: (request) => `${originOf(request)}${resourceMetadataPath(config.mcp.prefix)}`,
    },
    paymentsOf(request) {
      if (!storefront.config.x402) return null;
      const at = sellerAt(request.host);
      const plan = at?.seller.plans.values().next().value;
      if (!at || !plan) return null;
      const origin = originOf(request);
      return new McpPayments({
        purchases: storefront.purchases,
        seller: at.seller,
        planId: plan.id,
        meter: at.meter,
        priceOf: meterDeps.priceOf,
        resourceUrl: `${origin}${config.mcp.prefix}`,
        storefrontUrl: `${origin}${storefront.config.prefix}`,
      });
    },
  };
}

/**
 * `GET /.well-known/oauth-protected-resource/mcp` (RFC 9728), public: the storefront is
 * the authorization server of agent access tokens (its `POST /oauth2/token`, RFC 7523
 * JWT-bearer grant). Mounted only with the storefront on: otherwise only API keys call.
 */
export function registerResourceMetadata(app: FastifyInstance, container: Container): void {
  const { storefront, config } = container;
  if (!storefront) return;
  const schema = { tags: ['mcp'], summary: 'Protected-resource metadata of the MCP endpoint (RFC 9728)', response: { 200: ProtectedResourceMetadata } };
  app.get(resourceMetadataPath(config.mcp.prefix), { schema }, async (request, reply) => {
    const origin = originOf(request);
    reply.header('cache-control', 'max-age=300');
    return {
      resource: `${origin}${config.mcp.prefix}`,
      authorization_servers: [`${origin}${storefront.config.prefix}`],
      bearer_methods_supported: ['header'],
      resource_name: 'Sluice MCP tools',
    };
  });
}
