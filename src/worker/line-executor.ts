/**
 * Runs one batch line through its endpoint's synchronous path (the route's own service,
 * chosen by the batch's endpoint) and records its result with the tokens it used. Its
 * body is checked by the same compiled schema as the route's, once, before the first
 * attempt: a refused body is the line's error, worded as the route would. The line is paid by its batch's payer, through the line meter the
 * MeterResolver gives for that payer: the meter collects the line's usage (and any
 * settlement messages), which are written in the transaction that records the result,
 * so a line is billed exactly when its result is recorded: once. Retryable failures
 * (upstream 5xx, 429, connection) are retried with exponential backoff and jitter, up
 * to maxAttempts. A line refused credit only because the payer's other calls hold it
 * waits for them (waitForHeldCredit) within its batch's window; that wait is not an
 * attempt.
 */
import { lineUsageOf, type BatchEndpoints, type LineAnswer, type LineCall } from '../domain/batches/batch-endpoints.js';
import type { Clock } from '../domain/shared/clock.js';
import { AppError, isAppError } from '../domain/shared/errors.js';
import {
  CANCELLED,
  EXPIRED,
  KEY_EXPIRED,
  KEY_REVOKED,
  errorLine,
  failureOf,
  lineIdentity,
  outputLine,
  retriesExhausted,
  type LineFailure,
} from '../domain/batches/batch-lines.js';
import { isTerminal, NO_USAGE, type BatchRunInfo, type LineGate, type LineResult } from '../domain/batches/batch.types.js';
import type { BatchRunStore } from '../domain/batches/batch-stores.port.js';
import type { UsageRecord } from '../domain/billing/usage.types.js';
import type { OutboxMessage } from '../domain/outbox/outbox.types.js';
import { payerOf, type Caller, type Principal } from '../domain/identity/caller.js';
import { CallStory } from '../domain/request-log/call-story.js';
import type { RequestLogSink } from '../domain/request-log/request-log.port.js';
import { statusOfError } from '../domain/request-log/error-status.js';
import type { LineMeter, MeterResolver } from '../domain/billing/meter-resolver.js';
import { heldByOtherCalls, type HeldByOtherCalls } from '../domain/billing/meter.js';
import type { ResultWriter } from './result-writer.js';
import type { KeyPolicy } from '../domain/identity/key-policy.types.js';
import { inBatchLineSpan } from '../observability/batch-tracing.js';
import { sleep } from './sleep.js';

export interface LineTask {
  batch: BatchRunInfo;
  lineNo: number;
  customId: string;
  body: unknown;
  /** The line as uploaded (its body at `body`). */
  lineText: string;
}

export interface LineExecutorDeps {
  /** The service of each endpoint a batch may use, by url (filled as the features register theirs). */
  endpoints: BatchEndpoints;
  /** Each line's meter, by its batch's payer. */
  meters: MeterResolver;
  batches: BatchRunStore;
  writer: ResultWriter;
  clock: Clock;
  maxAttempts: number;
  retryBaseMs: number;
  /** Where each line's call is logged (one entry per line, naming its batch). */
  log: { readonly value: RequestLogSink };
}

const RETRY_CAP_MS = 30_000;
/**
 * The longest a line waiting for credit sleeps before it looks at its batch again (a
 * cancel or the window's end) and retries; a hold given back wakes it sooner.
 */
const HELD_CREDIT_WAIT_MS = 1_000;

/** A batch whose endpoint no feature of this process serves (its config lists it, the process does not run it). */
const noEndpoint = (endpoint: string) =>
  new AppError('unavailable', `Batch endpoint ${endpoint} is not served by this process`, { code: 'endpoint_not_served' });

/** Why a line must not run now, from the batch's state; null when it may run. */
export function gateFailure(gate: LineGate, nowMs: number): LineFailure | null {
  if (gate.status === 'cancelling' || gate.status === 'cancelled') return CANCELLED;
  if (nowMs >= gate.expiresAtMs) return EXPIRED;
  if (gate.keyRevoked) return KEY_REVOKED;
  const expiresAtMs = gate.keyPolicy?.expiresAtMs;
  if (expiresAtMs !== undefined && nowMs >= expiresAtMs) return KEY_EXPIRED;
  return null;
}

/** The caller a batch line runs as: its batch's project, creating key (and that key's policy as it is now) and payer. */
export function linePrincipal(batch: BatchRunInfo, keyPolicy: KeyPolicy | null = null): Principal {
  const principal: Principal = { kind: 'batch_line', projectId: batch.projectId, keyId: batch.createdByKeyId, subject: null, payer: payerOf(batch.payer) };
  if (keyPolicy !== null) principal.policy = keyPolicy;
  return principal;
}

export class LineExecutor {
  constructor(private readonly deps: LineExecutorDeps) {}

  /** Checks the batch (cancelled? expired? key revoked?) and runs or short-circuits the line. */
  async run(task: LineTask, signal: AbortSignal): Promise<void> {
    const gate = await this.deps.batches.lineGate(task.batch.id);
    // A batch that ended some other way (its input vanished) runs nothing more.
    if (!gate || isTerminal(gate.status)) return;
    const blocked = gateFailure(gate, this.deps.clock.nowMs());
    if (blocked) return this.recordFailure(task, blocked);
    let meter: LineMeter;
    try {
      meter = this.deps.meters.lineMeter(task.batch.payer);
    } catch (err) {
      // A payer this process cannot meter (an unknown kind): the line fails, the runner goes on.
      return this.recordFailure(task, failureOf(err));
    }
    try {
      const outcome = await this.#call(task, linePrincipal(task.batch, gate.keyPolicy), meter, signal);
      const { id, requestId } = lineIdentity(task.batch.id, task.lineNo);
      const result: LineResult =
        'answer' in outcome
          ? {
              batchId: task.batch.id,
              lineNo: task.lineNo,
              ok: true,
              errorCode: null,
              lineJson: outputLine(id, task.customId, requestId, outcome.answer.body, outcome.answer.json),
              usage: lineUsageOf(outcome.answer.body, meter.records),
            }
          : this.#failureResult(task, outcome.failure);
      await this.#write(result, meter.records, meter.outbox);
    } finally {
      meter.finish();
    }
  }

  /** Records a line that will not run (cancelled, expired, key revoked). */
  async recordFailure(task: LineTask, failure: LineFailure): Promise<void> {
    await this.#write(this.#failureResult(task, failure), [], []);
  }

  #failureResult(task: LineTask, failure: LineFailure): LineResult {
    const { id } = lineIdentity(task.batch.id, task.lineNo);
    return {
      batchId: task.batch.id,
      lineNo: task.lineNo,
      ok: false,
      errorCode: failure.code,
      lineJson: errorLine(id, task.customId, failure),
      usage: NO_USAGE,
    };
  }

  /** The line's call, told as one entry of the request log (the last attempt's story). */
  async #call(task: LineTask, principal: Principal, meter: LineMeter, signal: AbortSignal): Promise<{ answer: LineAnswer } | { failure: LineFailure }> {
    const story = this.#story(task, principal);
    let status = 200;
    try {
      const outcome = await this.#attempts(task, principal, meter, signal, story);
      if ('failure' in outcome) status = story.errorStatus ?? 400;
      return outcome;
    } catch (err) {
      status = statusOfError(err);
      throw err;
    } finally {
      this.deps.log.value.submit(story, status);
    }
  }

  #story(task: LineTask, principal: Principal): CallStory {
    const body = task.body as { model?: unknown } | null;
    const endpoint = task.batch.endpoint;
    return new CallStory({
      id: lineIdentity(task.batch.id, task.lineNo).requestId,
      principal,
      route: endpoint,
      wire: endpoint.replace(/^\/v1\//, '').replaceAll('/', '-'),
      scope: 'batch',
      modelRequested: typeof body?.model === 'string' ? body.model : '',
      stream: false,
      batchId: task.batch.id,
      createdAtMs: this.deps.clock.nowMs(),
    });
  }

  async #attempts(task: LineTask, principal: Principal, meter: LineMeter, signal: AbortSignal, story: CallStory): Promise<{ answer: LineAnswer } | { failure: LineFailure }> {
    const caller: Caller = { principal, meter, story };
    const { requestId } = lineIdentity(task.batch.id, task.lineNo);
    let call: LineCall;
    try {
      const endpoint = this.deps.endpoints.get(task.batch.endpoint);
      if (!endpoint) throw noEndpoint(task.batch.endpoint);
      call = endpoint.prepare(task.body, task.lineText);
    } catch (err) {
      story.failedWith(err);
      return { failure: failureOf(err) };
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await inBatchLineSpan(task.batch, task.lineNo, attempt, () => call(caller, { requestId, signal, route: 'batch', story }));
        story.firstByte();
        return { answer };
      } catch (err) {
        // A drain that ran out of time: leave the line unrecorded so another worker runs it.
        if (signal.aborted) throw err;
        story.failedWith(err);
        const held = heldByOtherCalls(err);
        if (held) {
          const blocked = await this.#waitForHeldCredit(task, held, signal);
          if (blocked) return { failure: blocked };
          attempt -= 1; // waiting for credit is not a failed attempt
          continue;
        }
        if (!isAppError(err) || !err.retryable) return { failure: failureOf(err) };
        if (attempt >= this.deps.maxAttempts) return { failure: retriesExhausted(err, attempt) };
        await sleep(this.#backoffMs(attempt, err.retryAfterSeconds), signal);
      }
    }
  }

  /**
   * The line fits the payer's balance but not beside the credit its other calls hold:
   * waits until one of them gives its hold back (or HELD_CREDIT_WAIT_MS), then says why
   * the line must not run any more (its batch was cancelled or expired meanwhile, or
   * its key revoked), or null to run it again.
   */
  async #waitForHeldCredit(task: LineTask, held: HeldByOtherCalls, signal: AbortSignal): Promise<LineFailure | null> {
    await held.released(HELD_CREDIT_WAIT_MS, signal);
    const gate = await this.deps.batches.lineGate(task.batch.id);
    if (!gate) return CANCELLED;
    return gateFailure(gate, this.deps.clock.nowMs());
  }

  /** Exponential backoff with jitter (50–100 % of the step), at least any retry-after. */
  #backoffMs(attempt: number, retryAfterSeconds: number | undefined): number {
    const step = Math.min(RETRY_CAP_MS, this.deps.retryBaseMs * 2 ** (attempt - 1));
    const jittered = step / 2 + Math.random() * (step / 2);
    return Math.min(RETRY_CAP_MS, Math.max(jittered, (retryAfterSeconds ?? 0) * 1000));
  }

  /** The durable write (group-committed); if it fails the line stays unrecorded and runs again later. */
  async #write(result: LineResult, usage: readonly UsageRecord[], outbox: readonly OutboxMessage[]): Promise<void> {
    await this.deps.writer.write(result, usage, outbox);
  }
}
