/**
 * The intermediary's HTTP contract (docs/gateway.md): `POST /v1/allowance/check` with the
 * read key and `POST /v1/usage/report` with the write key, JSON both ways, over one
 * keep-alive undici Pool. Answers are classified here and nowhere else: what fails open
 * (an outage) and what fails closed (Sluice misconfigured) is the contract's decision.
 */
import { Pool } from 'undici';
import type {
  AllowanceOutcome,
  AllowanceRequest,
  IntermediaryClient,
  ReportOutcome,
  UsageEvent,
} from '../../domain/gateway/intermediary.port.js';

export interface IntermediaryHttpOptions {
  /** `http(s)://host:port[/prefix]`. */
  apiUrl: string;
  readKey: string | null;
  writeKey: string | null;
  checkTimeoutMs: number;
  reportTimeoutMs?: number;
}

interface Answer {
  status: number;
  json: unknown;
  retryAfter: string | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

export class HttpIntermediaryClient implements IntermediaryClient {
  readonly #pool: Pool;
  readonly #prefix: string;

  constructor(private readonly options: IntermediaryHttpOptions) {
    const url = new URL(options.apiUrl);
    this.#pool = new Pool(url.origin, { connections: 64, keepAliveTimeout: 30_000 });
    this.#prefix = url.pathname.replace(/\/+$/, '');
  }

  async checkAllowance(request: AllowanceRequest): Promise<AllowanceOutcome> {
    let answer: Answer;
    try {
      answer = await this.#post('/v1/allowance/check', this.options.readKey, request, this.options.checkTimeoutMs);
    } catch (err) {
      return { kind: 'unavailable', cause: transportCause(err) };
    }
    if (answer.status === 429 || answer.status >= 500) return { kind: 'unavailable', cause: `status ${answer.status}` };
    if (answer.status !== 200) return { kind: 'misconfigured', status: answer.status };
    const body = answer.json;
    if (!isRecord(body) || typeof body.allowed !== 'boolean') return { kind: 'unavailable', cause: 'invalid answer' };
    if (body.allowed) return { kind: 'allowed' };
    if (typeof body.reason !== 'string') return { kind: 'unavailable', cause: 'invalid answer' };
    return { kind: 'denied', reason: body.reason };
  }

  async reportUsage(events: readonly UsageEvent[]): Promise<ReportOutcome> {
    let answer: Answer;
    try {
      answer = await this.#post('/v1/usage/report', this.options.writeKey, { events }, this.options.reportTimeoutMs ?? 10_000);
    } catch (err) {
      return { kind: 'retry', cause: transportCause(err), retryAfterMs: null };
    }
    // 401/403 say Sluice's write key is wrong, which an operator fixes: retried like an outage, not parked.
    if (answer.status === 429 || answer.status >= 500 || answer.status === 401 || answer.status === 403) {
      return { kind: 'retry', cause: `status ${answer.status}`, retryAfterMs: retryAfterMs(answer.retryAfter, Date.now()) };
    }
    if (answer.status !== 200) return { kind: 'rejected', cause: `status ${answer.status}` };
    const body = answer.json;
    if (!isRecord(body) || typeof body.accepted !== 'number') return { kind: 'retry', cause: 'invalid answer', retryAfterMs: null };
    return { kind: 'delivered', accepted: body.accepted, duplicates: typeof body.duplicates === 'number' ? body.duplicates : 0 };
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #post(path: string, key: string | null, payload: unknown, timeoutMs: number): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const signal = AbortSignal.timeout(timeoutMs);
    const response = await this.#pool.request({
      method: 'POST',
      path: this.#prefix + path,
      headers,
      body: JSON.stringify(payload),
      signal,
    });
    const text = await response.body.text();
    let json: unknown = undefined;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const retryAfter = response.headers['retry-after'];
    return { status: response.statusCode, json, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
  }
}

/** A short name of a transport failure for logs (never the URL or a key). */
function transportCause(err: unknown): string {
  const error = err as { name?: string; code?: string };
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout';
  return error.code ?? error.name ?? 'transport error';
}
