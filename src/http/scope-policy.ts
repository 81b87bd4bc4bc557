/**
 * A mounted scope's own policy: how it limits request rates and names the limit, its CORS
 * headers, its OpenAPI security scheme, its error statuses and bodies, extra fields on its
 * answers, the reply headers its meter sends as trailers on streams, and what the scope
 * does around its routes (its tenant, form bodies, echoed headers, an access log, models
 * served per route). `apiScope` takes one of these, implements each entry once, and stamps
 * the policy on every route it mounts (route config `scope`), so shared plugins (CORS,
 * SSE, errors) read the policy of the route they serve and handlers never branch on who
 * admitted the caller.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Principal } from '../domain/identity/caller.js';
import type { AppError } from '../domain/shared/errors.js';
import type { RateLimiter } from '../domain/identity/rate-limiter.port.js';
import type { HttpError, StatusOverrides } from './errors.js';

export interface ScopeRateLimit {
  /** Requests per minute per key; the limiter counts with it. */
  requestsPerMinute: number;
  limiter: RateLimiter;
  /** The key a caller's requests count under (default: its key, else subject, else project). */
  keyOf?: (principal: Principal) => string;
  /** The 429's message, naming what is limited (default: "… for this API key"). */
  exceededMessage?: string;
}

export interface ScopeCors {
  /** Request headers a browser may send (answered on preflights). */
  allowedHeaders: readonly string[];
  /** Response headers scripts may read. */
  exposedHeaders: readonly string[];
}

export interface ScopeSecurity {
  /** The scheme's name in `components.securitySchemes`. */
  name: string;
  /** An OpenAPI 3.1 security scheme object. */
  scheme: Readonly<Record<string, unknown>>;
}

/** Replaces the envelope of an error answered in this scope (e.g. a gateway's own error shape). */
export type ScopeErrorBody = (request: FastifyRequest, error: AppError, mapped: HttpError) => unknown;

/** Adds or changes fields of a 2xx JSON answer of this scope (e.g. fields the gateway adds). */
export type ScopeAnswerFields = (request: FastifyRequest, reply: FastifyReply, answer: Record<string, unknown>) => Record<string, unknown>;

/**
 * Adds fields to the events of a stream of this scope, given the settlement trailers sent
 * so far (e.g. the gateway repeats `gw-usage` in the final usage chunk).
 */
export type ScopeStreamEventFields = (
  request: FastifyRequest,
  event: Record<string, unknown>,
  trailers: Readonly<Record<string, string>>,
) => Record<string, unknown>;

/**
 * Who the request is addressed to, found before authentication (e.g. the storefront's
 * seller, from the host): put on `request[property]`, which its owner declares on
 * FastifyRequest. `resolve` throws the scope's refusal when the request names no tenant.
 */
export interface ScopeTenant {
  property: string;
  resolve(request: FastifyRequest): unknown;
}

/** One log line per answered request, with some request headers beside Sluice's request id. */
export interface ScopeAccessLog {
  /** Logged through at level info; when info is off at start, no hook is added at all. */
  logger: Logger;
  message: string;
  /** Log field → request header. */
  headers: Readonly<Record<string, string>>;
}

export interface ScopePolicy {
  /** Absent: the scope's callers are not rate-limited. */
  rateLimit?: ScopeRateLimit;
  cors?: ScopeCors;
  /** The schemes a caller may use, any one of them (OpenAPI `security` alternatives). */
  security?: readonly ScopeSecurity[];
  /** Error kinds this scope answers with other statuses (e.g. `insufficient_quota` → 402). */
  statusOverrides?: StatusOverrides;
  errorBody?: ScopeErrorBody;
  answerFields?: ScopeAnswerFields;
  /**
   * Reply headers the scope's meter may set when a call settles. On a stream, whose usage
   * is known only at its end, they go out as HTTP trailers, announced up front in `Trailer`.
   */
  trailers?: readonly string[];
  streamEventFields?: ScopeStreamEventFields;
  tenant?: ScopeTenant;
  /** Form bodies (`application/x-www-form-urlencoded`) parse as a null-prototype record. */
  forms?: boolean;
  /** Request headers sent back unchanged on every answer (e.g. an intermediary's request id). */
  echoHeaders?: readonly string[];
  accessLog?: ScopeAccessLog;
  /** Routes (paths under the scope) that serve only some models: any other `model` is not found. */
  modelsByRoute?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Paths under the scope that need no credentials. */
  publicPaths?: readonly string[];
  /** Headers set on every answer of the scope's routes (e.g. the console's Content-Security-Policy). */
  answerHeaders?: Readonly<Record<string, string>>;
  /** Cookies are parsed (@fastify/cookie) on the scope's requests. */
  cookies?: boolean;
  /** False: the scope's routes stay out of the OpenAPI document (they are documented elsewhere). */
  documented?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The policy of the scope that mounted the route (api-scope.ts). */
    scope?: ScopePolicy;
  }
}

/** The policy of the scope whose route serves `request`; undefined outside any scope. */
export const scopePolicyOf = (request: FastifyRequest): ScopePolicy | undefined => request.routeOptions.config.scope;
