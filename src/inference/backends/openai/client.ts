/**
 * HTTP to OpenAI-compatible upstreams: one keep-alive undici Pool per origin, the
 * binding's timeout, its API key, the caller's request id, and bounded retries of
 * connection failures that happened before any byte of the request was sent.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { upstreamHttpError, upstreamTransportError } from './errors.js';

export interface UpstreamTarget {
  modelId: string;
  /** `http(s)://host:port/prefix`, without a trailing slash (e.g. `http://127.0.0.1:8000/v1`). */
  baseUrl: string;
  apiKey: string | null;
  timeoutMs: number;
}

export interface UpstreamCall {
  requestId: string;
  signal: AbortSignal;
}

/** Connection errors raised before the request could be written: safe to retry. */
const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const CONNECT_ATTEMPTS = 3;
const CONNECT_BACKOFF_MS = 50;
const CONNECTIONS_PER_ORIGIN = 256;

interface Origin {
  pool: Pool;
  /** Path prefix of the base URL, e.g. `/v1`. */
  prefix: string;
}

export class UpstreamClient {
  readonly #origins = new Map<string, Origin>();

  /**
   * POSTs JSON and returns the response once its status is 2xx; any other status is read
   * and thrown as the mapped AppError. The caller owns (and must consume) the body.
   */
  async post(target: UpstreamTarget, path: string, payload: unknown, call: UpstreamCall, accept = 'application/json') {
    const { pool, prefix } = this.#origin(target.baseUrl);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept,
      'x-request-id': call.requestId,
    };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    const options: Dispatcher.RequestOptions = {
      method: 'POST',
      path: prefix + path,
      headers,
      body: JSON.stringify(payload),
      signal: call.signal,
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    };
    const response = await this.#requestWithConnectRetries(pool, options, target, call.signal);
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    let text = '';
    try {
      text = await response.body.text();
    } catch (err) {
      throw upstreamTransportError(target.modelId, err, call.signal);
    }
    throw upstreamHttpError(target.modelId, response.statusCode, text, response.headers);
  }

  /** POST and parse a JSON answer. */
  async postJson<T>(target: UpstreamTarget, path: string, payload: unknown, call: UpstreamCall) {
    const response = await this.post(target, path, payload, call);
    try {
      return { body: (await response.body.json()) as T, headers: response.headers };
    } catch (err) {
      if (err instanceof SyntaxError) throw upstreamTransportError(target.modelId, Object.assign(err, { code: 'invalid_json' }), call.signal);
      throw upstreamTransportError(target.modelId, err, call.signal);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.#origins.values()].map((o) => o.pool);
    this.#origins.clear();
    await Promise.allSettled(pools.map((p) => p.close()));
  }

  async #requestWithConnectRetries(pool: Pool, options: Dispatcher.RequestOptions, target: UpstreamTarget, signal: AbortSignal) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await pool.request(options);
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        if (!CONNECT_ERRORS.has(code) || attempt >= CONNECT_ATTEMPTS || signal.aborted) {
          throw upstreamTransportError(target.modelId, err, signal);
        }
        await sleep(CONNECT_BACKOFF_MS * 2 ** (attempt - 1), undefined, { signal }).catch(() => {});
      }
    }
  }

  #origin(baseUrl: string): Origin {
    let origin = this.#origins.get(baseUrl);
    if (!origin) {
      const url = new URL(baseUrl);
      origin = {
        pool: new Pool(url.origin, { connections: CONNECTIONS_PER_ORIGIN, connect: { timeout: 10_000 } }),
        prefix: url.pathname.replace(/\/+$/, ''),
      };
      this.#origins.set(baseUrl, origin);
    }
    return origin;
  }
}
