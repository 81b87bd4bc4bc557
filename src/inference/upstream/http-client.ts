/**
 * HTTP to upstream engines, for every protocol that speaks JSON over HTTP (openai, azure,
 * anthropic): one keep-alive undici Pool per origin, the binding's timeout, the
 * protocol's auth headers, the caller's request id, and bounded retries of connection
 * failures that happened before any byte of the request was sent. A status that is not
 * 2xx is read, the deployment's key redacted from it, and mapped by the protocol.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { redactSecret, upstreamNotJson, upstreamTransportError, type HttpErrorMapper } from './errors.js';
import { onAbort } from '../../domain/shared/abort.js';

export interface UpstreamTarget {
  modelId: string;
  /** `http(s)://host:port/prefix`, without a trailing slash (e.g. `http://127.0.0.1:8000/v1`). */
  baseUrl: string;
  /** The protocol's auth (and version) headers for this deployment. */
  headers: Record<string, string>;
  /** The deployment's key, redacted from whatever the engine answers. */
  secret: string | null;
  timeoutMs: number;
  /** Tries of a connection that fails before a byte was sent; 1 when the router has other deployments to go to. */
  connectAttempts: number;
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
const CONNECT_BACKOFF_MS = 50;
const CONNECTIONS_PER_ORIGIN = 256;

interface Origin {
  pool: Pool;
  /** Path prefix of the base URL, e.g. `/v1`. */
  prefix: string;
}

export class UpstreamClient {
  readonly #origins = new Map<string, Origin>();

  /** `errorOf`: the protocol's reading of a status that is not 2xx. */
  constructor(private readonly errorOf: HttpErrorMapper) {}

  /**
   * POSTs JSON and returns the response, body still streaming, once its status is 2xx
   * (for server-sent events); any other status is read and thrown as the mapped AppError.
   * The caller owns (and must consume) the body.
   */
  async post(target: UpstreamTarget, path: string, payload: unknown, call: UpstreamCall, accept: string) {
    const { pool, options } = this.#request(target, path, payload, call, accept);
    const withSignal: Dispatcher.RequestOptions = Object.assign(options, { signal: call.signal });
    const response = await this.#withConnectRetries(target, call.signal, () => pool.request(withSignal));
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    let text = '';
    try {
      text = await response.body.text();
    } catch (err) {
      throw upstreamTransportError(target.modelId, err, call.signal);
    }
    throw this.errorOf(target.modelId, response.statusCode, redactSecret(text, target.secret), response.headers);
  }

  /** POSTs JSON and parses the JSON answer; any status but 2xx is thrown as the mapped AppError. */
  async postJson<T>(target: UpstreamTarget, path: string, payload: unknown, call: UpstreamCall) {
    const { pool, options } = this.#request(target, path, payload, call, 'application/json');
    const answer = await this.#withConnectRetries(target, call.signal, () => bufferedCall(pool, options, call.signal));
    if (answer.statusCode < 200 || answer.statusCode >= 300) {
      throw this.errorOf(target.modelId, answer.statusCode, redactSecret(answer.text, target.secret), answer.headers);
    }
    try {
      return { body: JSON.parse(answer.text) as T, headers: answer.headers };
    } catch {
      const type = answer.headers['content-type'];
      throw upstreamNotJson(target.modelId, answer.statusCode, Array.isArray(type) ? type[0] : type);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.#origins.values()].map((o) => o.pool);
    this.#origins.clear();
    await Promise.allSettled(pools.map((p) => p.close()));
  }

  /** The pool of the target's origin and a JSON POST to it: binding timeout, auth headers, the caller's request id. */
  #request(target: UpstreamTarget, path: string, payload: unknown, call: UpstreamCall, accept: string) {
    const { pool, prefix } = this.#origin(target.baseUrl);
    const headers: Record<string, string> = Object.assign({ 'content-type': 'application/json', accept, 'x-request-id': call.requestId }, target.headers);
    const options: Dispatcher.DispatchOptions = {
      method: 'POST',
      path: prefix + path,
      headers,
      body: JSON.stringify(payload),
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    };
    return { pool, options };
  }

  /** Retries connection failures that happened before any byte was sent, with backoff. */
  async #withConnectRetries<R>(target: UpstreamTarget, signal: AbortSignal, attempt: () => Promise<R>): Promise<R> {
    for (let n = 1; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        if (!CONNECT_ERRORS.has(code) || n >= target.connectAttempts || signal.aborted) throw upstreamTransportError(target.modelId, err, signal);
        await sleep(CONNECT_BACKOFF_MS * 2 ** (n - 1), undefined, { signal }).catch(() => {});
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

interface BufferedAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One request through undici's dispatch API with the answer buffered: no body stream
 * (undici's request() wraps every answer in a Readable) and no listener on the signal
 * itself (see onAbort).
 */
function bufferedCall(pool: Pool, options: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<BufferedAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    let statusCode = 0;
    let headers: BufferedAnswer['headers'] = {};
    const chunks: Buffer[] = [];
    let controller: Dispatcher.DispatchController | null = null;
    let aborted: unknown = null;
    const stopListening = onAbort(signal, (reason) => {
      aborted = reason;
      controller?.abort(reason as Error);
    });
    pool.dispatch(options, {
      onRequestStart(started) {
        controller = started;
        if (aborted !== null) started.abort(aborted as Error);
      },
      onResponseStart(_controller, status, responseHeaders) {
        statusCode = status;
        headers = responseHeaders;
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        stopListening();
        resolve({ statusCode, headers, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') });
      },
      onResponseError(_controller, err) {
        stopListening();
        reject(err);
      },
    });
  });
}
