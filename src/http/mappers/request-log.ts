/** Request log entries, bodies and sessions as the wire shows them (src/http/schemas/request-log.ts). */
import { toUnixSeconds } from '../../domain/shared/clock.js';
import { microsToUsd } from '../../domain/shared/money.js';
import type { RequestBodyView } from '../../domain/request-log/request-log.service.js';
import type { RequestLogEntry, RequestSession } from '../../domain/request-log/request-log.types.js';

export function requestSummaryToWire(e: RequestLogEntry) {
  return {
    id: e.id,
    object: 'request' as const,
    created_at: toUnixSeconds(e.createdAtMs),
    project_id: e.projectId,
    key_id: e.keyId,
    route: e.route,
    wire: e.wire,
    scope: e.scope,
    model_requested: e.modelRequested,
    model: e.model,
    provider: e.provider,
    deployment: e.deployment,
    status: e.status,
    error_code: e.errorCode,
    stream: e.stream,
    session_id: e.sessionId,
    end_user: e.endUser,
    tags: [...e.tags],
    batch_id: e.batchId,
    usage: { input_tokens: e.inputTokens, output_tokens: e.outputTokens, cached_input_tokens: e.cachedInputTokens },
    cost_usd: microsToUsd(e.costMicros),
    latency_ms: { credit_wait: e.creditWaitMs, first_byte: e.firstByteMs, engine: e.engineMs, total: e.totalMs },
    body_logged: e.bodyLogged,
  };
}

export function requestDetailToWire(e: RequestLogEntry) {
  return {
    ...requestSummaryToWire(e),
    attempts: e.attempts.map((a) => ({
      deployment: a.deployment,
      provider: a.provider,
      status: a.status,
      error_code: a.errorCode,
      started_ms: a.startedMs,
      duration_ms: a.durationMs,
    })),
    fallback: e.fallback,
    tools_called: [...e.toolsCalled],
    hold_usd: e.holdMicros === null ? null : microsToUsd(e.holdMicros),
    settled_usd: e.settledMicros === null ? null : microsToUsd(e.settledMicros),
  };
}

export const requestBodyToWire = (b: RequestBodyView) => ({
  object: 'request_body' as const,
  id: b.id,
  mode: b.mode,
  request: b.request,
  response: b.response,
  truncated: b.truncated,
});

export function requestSessionToWire(s: RequestSession) {
  return {
    object: 'request_session' as const,
    id: s.id,
    requests: s.requests,
    first_at: toUnixSeconds(s.firstAtMs),
    last_at: toUnixSeconds(s.lastAtMs),
    usage: { input_tokens: s.inputTokens, output_tokens: s.outputTokens, cached_input_tokens: s.cachedInputTokens },
    cost_usd: microsToUsd(s.costMicros),
    data: s.entries.map(requestSummaryToWire),
  };
}
