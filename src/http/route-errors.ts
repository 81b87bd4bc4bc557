/**
 * A route answers its errors in its wire's format (src/wire/error-format.ts): it declares
 * it in its route config, `config: { wireErrors }`. Without one, OpenAI's envelope. Its
 * scope may answer a wire's errors in a variant of its own (scope policy
 * `wireErrorVariants`, e.g. the gateway's failed Responses object), and adds its own
 * statuses; the route's own `statusOverrides` come under the scope's.
 */
import type { FastifyRequest } from 'fastify';
import type { WireErrorFormat } from '../wire/error-format.js';
import { OPENAI_ERRORS } from '../wire/openai-errors.js';
import type { ErrorContext, StatusOverrides } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The error envelope and stream error frame of the wire this route serves. */
    wireErrors?: WireErrorFormat;
    /** Statuses this route answers differently from its scope. */
    statusOverrides?: StatusOverrides;
  }
}

/** The format `request`'s route answers errors in: its wire's, as its scope answers that wire. */
export function wireErrorsOf(request: FastifyRequest): WireErrorFormat {
  const { wireErrors = OPENAI_ERRORS, scope } = request.routeOptions.config;
  return scope?.wireErrorVariants?.get(wireErrors) ?? wireErrors;
}

/**
 * A route's own statuses (the decision route's wire), under its scope's: the scope owns its
 * policy, so a refusal the scope's strategy makes (the console's CSRF 403) keeps the
 * status the scope declares on every route it mounts.
 */
function overridesOf(request: FastifyRequest): StatusOverrides | undefined {
  const { scope, statusOverrides } = request.routeOptions.config;
  if (!statusOverrides) return scope?.statusOverrides;
  return scope?.statusOverrides ? { ...statusOverrides, ...scope.statusOverrides } : statusOverrides;
}

/** How an error on `request`'s route is answered: its statuses, its format, and the request. */
export const errorContextOf = (request: FastifyRequest): ErrorContext & { format: WireErrorFormat } => ({ overrides: overridesOf(request), format: wireErrorsOf(request), request });

export type { WireErrorFormat };
