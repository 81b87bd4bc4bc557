/**
 * What a failed attempt on one deployment means for the call: retry elsewhere (and count
 * it against the deployment), wait out a 429, go to a longer-context model, or stop
 * (the caller's own mistake, or the caller left).
 */
import { isAppError } from '../../domain/shared/errors.js';

export type AttemptFailure =
  | { kind: 'retry'; unreachable: string | null }
  | { kind: 'rate_limited'; retryAfterMs: number | null }
  | { kind: 'context_length' }
  | { kind: 'final' };

/** Engines word the context-length refusal differently (vLLM, llama.cpp, SGLang, OpenAI); none is the caller's fault to retry. */
const CONTEXT_LENGTH = /maximum context length|context length exceeded|context_length_exceeded|exceeds? the context (window|size)|too many tokens/i;

export function classifyFailure(err: unknown, signal: AbortSignal): AttemptFailure {
  if (signal.aborted || !isAppError(err)) return { kind: 'final' };
  if (err.kind === 'context_length' || (err.kind === 'invalid_request' && CONTEXT_LENGTH.test(err.message))) return { kind: 'context_length' };
  if (err.kind === 'rate_limit') return { kind: 'rate_limited', retryAfterMs: err.retryAfterSeconds === undefined ? null : err.retryAfterSeconds * 1000 };
  if (err.kind === 'upstream' && err.retryable) return { kind: 'retry', unreachable: unreachableCode(err) };
  return { kind: 'final' };
}

/** The connection error code behind a transport failure (no host or path), or null for an HTTP-level failure. */
function unreachableCode(err: { code?: string | null; cause?: unknown; upstreamStatus?: number }): string | null {
  if (err.upstreamStatus !== undefined) return null;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : null;
}
