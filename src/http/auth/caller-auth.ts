/**
 * Runs a scope's authentication strategy and its per-caller rate limit, and hands the
 * Caller (with the reply channel its meter speaks through) to the handlers (callerOf).
 * Header strategies run in onRequest, before the body is read. Raw-body strategies run in
 * preParsing: the body's exact bytes are read first (bounded by the route's body limit),
 * the strategy verifies them, and only an admitted request's body reaches a parser, which
 * parses those same bytes (raw-body.ts). A body that fails verification is therefore the
 * scope's refusal, never a parse error, and an unauthenticated client makes nothing parse.
 *
 * Callback-style, with a synchronous path when the strategy answers at once: this runs on
 * every request, and an async hook with two awaits costs several promise hops.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/shared/errors.js';
import { rateLimitKeyOf, type Caller, type Principal } from '../../domain/identity/caller.js';
import type { RateDecision } from '../../domain/identity/rate-limiter.port.js';
import { captureBody } from '../raw-body.js';
import { jsonParseOptions, parseJsonText } from '../plugins/json-body.js';
import { ReplyHeaderChannel } from '../reply-headers.js';
import type { ScopeRateLimit } from '../scope-policy.js';
import type { AuthStrategy } from './strategy.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** The exact body bytes, in scopes whose strategy needs them. */
    rawBody: Buffer | null;
  }
}

const missingCaller = () => new AppError('internal', 'route is missing authentication');

export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw missingCaller();
  return request.caller;
}

/**
 * Runs the scope's strategy on `request` again: `counted`, with its rate limit, as a new
 * request would be (and the caller it admits becomes `request.caller`); otherwise only
 * whether its credentials still hold. Rejects with the refusal a new request would get.
 */
export type AdmitAgain = (request: FastifyRequest, reply: FastifyReply, counted: boolean) => Promise<Caller>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** On the routes of a scope whose strategy reads headers only. */
    admitAgain?: AdmitAgain;
  }
}

/** The caller of `request`'s route admitted again (AdmitAgain); refused when the route's scope cannot. */
export function admitAgain(request: FastifyRequest, reply: FastifyReply, counted: boolean): Promise<Caller> {
  const again = request.routeOptions.config.admitAgain;
  if (!again) return Promise.reject(missingCaller());
  return again(request, reply, counted);
}

/** The tenant of the call (files, batches and other per-project objects). */
export const principalOf = (request: FastifyRequest): Principal => callerOf(request).principal;

export interface CallerAuthOptions {
  strategy: AuthStrategy;
  /** Absent: callers are admitted without a rate limit. */
  rateLimit?: ScopeRateLimit;
  /** Paths under the scope that need no credentials. */
  publicPaths?: ReadonlySet<string>;
}

type Done = (err?: Error) => void;

const isPublic = (paths: ReadonlySet<string>, url: string): boolean => {
  const query = url.indexOf('?');
  return paths.has(query === -1 ? url : url.slice(0, query));
};

const API_KEY_LIMIT_MESSAGE = 'Rate limit exceeded: too many requests per minute for this API key';

export function registerCallerAuth(scope: FastifyInstance, options: CallerAuthOptions): void {
  if (!scope.hasRequestDecorator('caller')) scope.decorateRequest('caller', null);
  if (!scope.hasRequestDecorator('rawBody')) scope.decorateRequest('rawBody', null);
  const { strategy, rateLimit } = options;
  const limit = String(rateLimit?.requestsPerMinute);
  const keyOf = rateLimit?.keyOf ?? rateLimitKeyOf;
  const exceededMessage = rateLimit?.exceededMessage ?? API_KEY_LIMIT_MESSAGE;
  const exceededCode = rateLimit?.exceededCode ?? 'rate_limit_exceeded';

  const decide = (request: FastifyRequest, reply: FastifyReply, caller: Caller, decision: RateDecision, done: Done) => {
    const keyRpm = caller.principal.policy?.rpm;
    reply.header('x-ratelimit-limit-requests', keyRpm === undefined ? limit : String(keyRpm));
    reply.header('x-ratelimit-remaining-requests', String(decision.remaining));
    if (!decision.allowed) {
      // Refused, the caller is still known: its project's request log records the refusal (call-story.ts).
      request.caller = { principal: caller.principal, meter: caller.meter, reply: new ReplyHeaderChannel(reply) };
      done(new AppError('rate_limit', exceededMessage, { code: exceededCode, retryAfterSeconds: decision.retryAfterSeconds }));
      return;
    }
    request.caller = { principal: caller.principal, meter: caller.meter, reply: new ReplyHeaderChannel(reply) };
    done();
  };

  const admit = (request: FastifyRequest, reply: FastifyReply, caller: Caller | null, done: Done) => {
    if (caller === null) return done();
    if (!rateLimit) {
      request.caller = { principal: caller.principal, meter: caller.meter, reply: new ReplyHeaderChannel(reply) };
      return done();
    }
    let decision: RateDecision | Promise<RateDecision>;
    try {
      // A key with its own rpm is limited by it instead of the scope's, on the same (shared) counter.
      decision = rateLimit.limiter.consume(keyOf(caller.principal), caller.principal.policy?.rpm);
    } catch (err) {
      return done(err as Error);
    }
    if (decision instanceof Promise) decision.then((d) => decide(request, reply, caller, d, done), done);
    else decide(request, reply, caller, decision, done);
  };

  const exempt = (request: FastifyRequest) =>
    request.method === 'OPTIONS' || (options.publicPaths !== undefined && isPublic(options.publicPaths, request.url));

  const authenticate = (request: FastifyRequest, reply: FastifyReply, done: Done) => {
    let caller: Caller | null | Promise<Caller | null>;
    try {
      caller = strategy.authenticate(request);
    } catch (err) {
      return done(err as Error);
    }
    if (caller instanceof Promise) caller.then((found) => admit(request, reply, found, done), done);
    else admit(request, reply, caller, done);
  };

  if (strategy.needs === 'headers') {
    scope.addHook('onRequest', (request, reply, done) => (exempt(request) ? done() : authenticate(request, reply, done)));
    // A connection that outlives its request (a WebSocket) admits its caller again per message, and checks its key stays valid.
    const again: AdmitAgain = (request, reply, counted) =>
      new Promise((resolve, reject) => {
        const settle = (err?: Error) => (err ? reject(err) : resolve(callerOf(request)));
        if (counted) return authenticate(request, reply, settle);
        let found: Caller | null | Promise<Caller | null>;
        try {
          found = strategy.authenticate(request);
        } catch (err) {
          return reject(err as Error);
        }
        void Promise.resolve(found).then((caller) => (caller ? resolve(caller) : reject(missingCaller())), reject);
      });
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, admitAgain: again };
    });
    return;
  }
  scope.addHook('preParsing', (request, reply, payload, done) => {
    captureBody(request.raw, request.routeOptions.bodyLimit ?? scope.initialConfig.bodyLimit ?? Infinity, (error, bytes) => {
      if (error) return done(error);
      request.rawBody = bytes!;
      if (exempt(request)) return done(null, payload);
      authenticate(request, reply, (err) => (err ? done(err) : done(null, payload)));
    });
  });
  parseJsonFromCapturedBytes(scope);
}

/**
 * In a raw-body scope, JSON is parsed from the bytes already captured (and verified)
 * rather than read from the stream a second time; the copy put back on the stream is left
 * for other readers (multipart, a route's own parser) and dropped with the request.
 */
function parseJsonFromCapturedBytes(scope: FastifyInstance): void {
  const options = jsonParseOptions(scope);
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', (request: FastifyRequest, _payload: unknown, done: (err: Error | null, body?: unknown) => void) => {
    try {
      done(null, parseJsonText(request, (request.rawBody ?? EMPTY).toString('utf8'), options));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

const EMPTY = Buffer.alloc(0);
