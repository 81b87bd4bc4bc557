/**
 * The one error type of the code base. Domain code throws AppError with a `kind`;
 * `src/http/errors.ts` is the single table that maps kinds to HTTP statuses and the
 * spec's envelope. Anything that is not an AppError becomes an opaque 500.
 */
export type ErrorKind =
  | 'invalid_request' // 400
  | 'context_length' // 400 (420 on the gateway): input over the model's token limit
  | 'authentication' // 401
  | 'permission' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'payload_too_large' // 413
  | 'unprocessable' // 422
  | 'payment_required' // 402
  | 'insufficient_quota' // 429 (402 on the decision route)
  | 'rate_limit' // 429
  | 'upstream' // 502
  | 'unavailable' // 503
  | 'internal'; // 500

/** The HTTP status of each kind (the gateway and the decision route override some: src/http/errors.ts). */
export const STATUS_OF_KIND: Readonly< Record<ErrorKind, number>> = {
  invalid_request: 400,
  context_length: 400,
  authentication: 401,
  payment_required: 402,
  permission: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unprocessable: 422,
  insufficient_quota: 429,
  rate_limit: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
};

export interface AppErrorOptions {
  code?: string | null;
  param?: string | null;
  /** 1-based line of a batch input file. */
  line?: number;
  /** Seconds a client should wait before retrying (sets `retry-after`). */
  retryAfterSeconds?: number;
  /** Whether retrying the same request may succeed (upstream 5xx, 429, connection errors). */
  retryable?: boolean;
  /** HTTP status the upstream answered with, when the error came from one. */
  upstreamStatus?: number;
  /**
   * Whether the message may reach the client. Defaults to true, except for `internal`
   * errors, whose messages may carry internal detail and are replaced by a generic one
   * unless the thrower marks them safe.
   */
  expose?: boolean;
  /** Replaces the error envelope and adds headers (a 402 price quote, `WWW-Authenticate`). */
  challenge?: Challenge;
  cause?: unknown;
}

/**
 * What a refusal tells the client beyond the envelope: headers to add and, when `body`
 * is set, the body to send instead of the envelope (e.g. an x402 `PaymentRequired`, or
 * a gateway's `{"error": "invalid_gateway_signature"}`).
 */
export interface Challenge {
  headers?: Readonly<Record<string, string>>;
  body?: unknown;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly code: string | null;
  readonly param: string | null;
  readonly line: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly retryable: boolean;
  readonly upstreamStatus: number | undefined;
  readonly expose: boolean;
  readonly challenge: Challenge | undefined;

  constructor(kind: ErrorKind, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.line = options.line;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.retryable = options.retryable ?? false;
    this.upstreamStatus = options.upstreamStatus;
    this.expose = options.expose ?? kind !== 'internal';
    this.challenge = options.challenge;
  }
}

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;

/** Shorthands for the errors every layer raises. */
export const invalidRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new AppError('invalid_request', message, { param, code: code ?? 'invalid_request_error' });

export const notFound = (message: string, code: string | null = null, param: string | null = null) =>
  new AppError('not_found', message, { code, param });

export const insufficientQuota = () =>
  new AppError('insufficient_quota', 'You exceeded your current quota, please check your plan and billing details.', {
    code: 'insufficient_quota',
  });
