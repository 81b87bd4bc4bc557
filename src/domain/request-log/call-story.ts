/**
 * One call's story, collected as it happens: the route opens it and hands it down (on the
 * Caller for the meter, on the CallContext for the router), each part writes what it
 * saw into plain fields, and the route closes it and submits it to the request log. No
 * closures per event, nothing awaited: a story costs a call one object and its arrays.
 *
 * Times are `performance.now()` readings; the entry states them as milliseconds from the
 * call's start.
 */
import type { UsageRecord } from '../billing/usage.types.js';
import { isAppError } from '../shared/errors.js';
import { statusOfError } from './error-status.js';
import type { Principal } from '../identity/caller.js';
import type { AttemptRecorder } from '../models/inference-backend.port.js';
import type { ToolNameSink } from './tool-names.js';
import type { AttemptEntry, BodyMode, CallScope, RequestLogEntry } from './request-log.types.js';

export interface StoryOpening {
  id: string;
  principal: Principal;
  route: string;
  wire: string;
  scope: CallScope;
  modelRequested: string;
  stream: boolean;
  sessionId?: string | undefined;
  tags?: readonly string[] | undefined;
  endUser?: string | undefined;
  batchId?: string | null;
  createdAtMs: number;
}

const NO_TAGS: readonly string[] = [];

/** Where a story ends: its entry is made once (close), and the parts may go on writing into it harmlessly until then. */
export class CallStory implements AttemptRecorder, ToolNameSink {
  readonly id: string;
  readonly opening: StoryOpening;
  readonly #startedAt = performance.now();
  readonly attempts: AttemptEntry[] = [];
  readonly toolsCalled: string[] = [];
  model: string | null = null;
  deployment: string | null = null;
  provider: string | null = null;
  fallback = false;
  creditWaitMs: number | null = null;
  firstByteMs: number | null = null;
  holdMicros: number | null = null;
  usage: UsageRecord | null = null;
  errorCode: string | null = null;
  /** What the project keeps of bodies (`off` unless it logs them): a traced call's span carries them the same way. */
  bodyMode: BodyMode = 'off';
  /** The project logs bodies: the request and answer are kept below. */
  get keepBodies(): boolean {
    return this.bodyMode !== 'off';
  }
  /** The request and answer as the client sent and got them (referenced, not copied); read only when the project logs bodies. */
  requestBody: unknown = null;
  responseBody: unknown = null;
  /** A stream's events, kept only when the project logs bodies (`keepEvents`). */
  events: object[] | null = null;
  /** The caller's own credentials as sent, taken out of a redacted body wherever they appear. */
  secrets: readonly string[] = [];
  /** The session the call belongs to: the agent's session header, else `prompt_cache_key`, else its `previous_response_id` chain. */
  sessionId: string | null;
  #closed = false;

  constructor(opening: StoryOpening) {
    this.opening = opening;
    this.id = opening.id;
    this.sessionId = opening.sessionId ?? null;
  }

  /** The call's tags and end user as the route labelled them (header, body, the key's defaults); they replace the opening's. */
  labelled(tags: readonly string[] | undefined, endUser: string | undefined): void {
    if (tags !== undefined) this.#tags = tags;
    if (endUser !== undefined) this.#endUser = endUser;
  }

  #tags: readonly string[] | undefined;
  #endUser: string | undefined;

  /** The call continues a chain of responses: its session, unless the request named one. */
  chain(root: string): void {
    this.sessionId ??= root;
  }

  /** Milliseconds since the call began. */
  elapsed(): number {
    return performance.now() - this.#startedAt;
  }

  /** A try of a deployment that began at `startedAt` (a performance.now() reading) and ended now. */
  attempt(deployment: string, provider: string | null, status: number | null, errorCode: string | null, startedAt: number): void {
    const now = performance.now();
    this.attempts.push({ deployment, provider, status, errorCode, startedMs: round(startedAt - this.#startedAt), durationMs: round(now - startedAt) });
  }

  served(model: string, deployment: string, provider: string | null, fallback: boolean): void {
    this.model = model;
    this.deployment = deployment;
    this.provider = provider;
    this.fallback = fallback;
  }

  /** The meter admitted the call, holding `holdMicros` (null when it holds none), after waiting `waitedMs` for credit. */
  admitted(holdMicros: number | null, waitedMs: number): void {
    this.holdMicros = holdMicros;
    this.creditWaitMs = round(waitedMs);
  }

  settled(record: UsageRecord | null): void {
    this.usage = record;
  }

  /** The first byte of the answer is on its way (a stream's first event, or the JSON answer). */
  firstByte(): void {
    if (this.firstByteMs === null) this.firstByteMs = round(this.elapsed());
  }

  tool(name: string): void {
    if (!this.toolsCalled.includes(name)) this.toolsCalled.push(name);
  }

  failed(code: string | null): void {
    this.errorCode = code;
  }

  /** The status a failure (not an HTTP answer: a batch line's) ends the call with; null until one. */
  errorStatus: number | null = null;

  failedWith(err: unknown): void {
    this.errorStatus = statusOfError(err);
    this.errorCode = isAppError(err) ? (err.code ?? err.kind) : 'internal_error';
  }

  /** The entry of the call that ended with `status`; null when it was closed already. */
  close(status: number, bodyLogged: boolean): RequestLogEntry | null {
    if (this.#closed) return null;
    this.#closed = true;
    const { opening, usage } = this;
    // The usage record's status wins where it tells more (499: the client left a stream).
    if (usage !== null && usage.status >= 400) status = usage.status;
    const totalMs = round(this.elapsed());
    const serving = this.attempts.length > 0 ? this.attempts[this.attempts.length - 1]! : null;
    // An attempt ends, for the router, when the answer starts: a stream's engine works on until its end.
    const engineMs = serving === null ? null : opening.stream ? totalMs - serving.startedMs : serving.durationMs;
    return {
      id: this.id,
      projectId: opening.principal.projectId,
      keyId: opening.principal.keyId,
      createdAtMs: opening.createdAtMs,
      route: opening.route,
      wire: opening.wire,
      scope: opening.scope,
      modelRequested: opening.modelRequested,
      model: usage?.model ?? this.model,
      provider: this.provider,
      deployment: usage?.deployment ?? this.deployment,
      status,
      errorCode: status >= 400 ? (this.errorCode ?? 'error') : null,
      stream: opening.stream,
      sessionId: this.sessionId,
      endUser: this.#endUser ?? opening.endUser ?? null,
      tags: this.#tags ?? opening.tags ?? NO_TAGS,
      batchId: opening.batchId ?? null,
      inputTokens: usage?.inputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
      cachedInputTokens: usage?.cachedInputTokens ?? 0,
      costMicros: usage?.costMicros ?? 0,
      creditWaitMs: this.creditWaitMs,
      firstByteMs: this.firstByteMs,
      engineMs,
      totalMs,
      attempts: this.attempts,
      fallback: this.fallback,
      toolsCalled: this.toolsCalled,
      holdMicros: this.holdMicros,
      settledMicros: usage ? usage.costMicros : null,
      bodyLogged,
    };
  }
}

const round = (ms: number): number => Math.round(ms);
