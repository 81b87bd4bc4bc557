/**
 * One run of a claimed background response: the responses service makes it as its
 * creator (paid through the line meter of its creator's payer, as a batch line is), its
 * events are appended while the lease is held, and it is settled once: final object,
 * conversation, remaining events and usage in one transaction (BackgroundQueue.settle).
 *
 * A response whose earlier run died is run again only if no client can have seen part of
 * its answer (nothing past `response.created`/`response.in_progress` was stored); the
 * rerun's first events, already stored, are skipped. Otherwise, or after `maxAttempts`
 * runs, it is failed with an error, never left queued: nothing of an interrupted run was
 * billed, since usage is written only when a run settles.
 */
import type { Logger } from 'pino';
import type { BillingService } from '../domain/billing/billing.service.js';
import { heldByOtherCalls } from '../domain/billing/meter.js';
import type { LineMeter, MeterResolver } from '../domain/billing/meter-resolver.js';
import { payerOf, type Caller } from '../domain/identity/caller.js';
import { newOutboxEntry } from '../domain/outbox/outbox.types.js';
import type { BackgroundJob, BackgroundQueue, StoredEvent } from '../domain/responses/response-store.port.js';
import { conversationOf } from '../domain/responses/stored-items.js';
import type { ResponsesEngine } from '../domain/responses/stored-responses.js';
import type { ResponseInputItem, ResponseStreamEvent } from '../domain/responses/responses.types.js';
import type { Clock } from '../domain/shared/clock.js';
import { isAppError } from '../domain/shared/errors.js';
import { asBackground, failedResource } from '../wire/responses/background-resource.js';
import type { ResponsesRequestBody } from '../wire/responses/body.js';
import { responsesRequestOf } from '../wire/responses/mapper.js';

export interface BackgroundRunDeps {
  worker: string;
  queue: BackgroundQueue;
  engine: ResponsesEngine;
  meters: MeterResolver;
  billing: BillingService;
  clock: Clock;
  logger: Logger;
  maxAttempts: number;
}

type RunError = { code: string; message: string };

const INTERRUPTED: RunError = {
  code: 'server_error',
  message: 'The background response was interrupted after it began to answer (its worker stopped) and cannot be resumed; nothing was billed. Create it again.',
};
const attemptsExhausted = (runs: number): RunError => ({
  code: 'server_error',
  message: `The background response could not be run: its worker stopped ${runs} times before it answered; nothing was billed. Create it again.`,
});

const TERMINAL_EVENTS = new Set(['response.completed', 'response.failed', 'response.incomplete']);
const OPENING_EVENTS = new Set(['response.created', 'response.queued', 'response.in_progress']);
/** Events are appended at least this often while the engine streams, or every FLUSH_EVENTS. */
const FLUSH_MS = 50;
const FLUSH_EVENTS = 32;
const HELD_CREDIT_WAIT_MS = 1_000;

function errorOf(err: unknown): RunError {
  if (isAppError(err) && err.expose) return { code: err.code ?? 'server_error', message: err.message };
  return { code: 'server_error', message: 'The model failed to answer.' };
}

export class BackgroundRun {
  readonly #abort = new AbortController();
  #draining = false;
  #buffer: StoredEvent[] = [];
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  /** The object as last streamed, and whether it changed since the last append. */
  #latest: Record<string, unknown> | null = null;
  #latestChanged = false;
  #answerStarted = false;
  #nextSeq: number;

  constructor(
    readonly job: BackgroundJob,
    private readonly deps: BackgroundRunDeps,
  ) {
    this.#nextSeq = job.eventCount;
  }

  /** The response no longer runs for this worker (cancelled, deleted, lease lost): stop the model, settle what can be. */
  stop(): void {
    this.#abort.abort(new Error('the background response no longer runs here'));
  }

  /** The worker drains: stop the model and give the lease back unsettled. */
  drain(): void {
    this.#draining = true;
    this.stop();
  }

  async run(): Promise<void> {
    const { job, deps } = this;
    // Its run was cancelled and its worker died: nothing of it is known, nothing is billed.
    if (job.status === 'cancelled') return void (await this.#settle(job.resource, null));
    if (job.answerStarted) return this.#fail(INTERRUPTED);
    if (job.attempt > deps.maxAttempts) return this.#fail(attemptsExhausted(job.attempt - 1));
    // Taken by a worker: in_progress from now, before the engine answers.
    if (!(await deps.queue.append(deps.worker, job.id, [], { ...job.resource, status: 'in_progress' }, false))) {
      return void (await this.#settle(job.resource, null));
    }
    let meter: LineMeter;
    try {
      meter = deps.meters.lineMeter(job.payer);
    } catch (err) {
      return this.#fail(errorOf(err));
    }
    try {
      const final = await this.#produce(meter);
      if (this.#draining) return await deps.queue.release(deps.worker, job.id);
      await this.#settle(final, meter);
    } finally {
      clearTimeout(this.#timer);
      meter.finish();
    }
  }

  /** The run's final object; its events are appended or buffered for the settlement. */
  async #produce(meter: LineMeter): Promise<Record<string, unknown>> {
    const { job, deps } = this;
    const caller: Caller = {
      principal: { kind: 'background_response', projectId: job.owner.projectId, keyId: job.keyId, subject: job.owner.subject || null, payer: payerOf(job.payer) },
      meter,
    };
    const context = { requestId: job.requestId, signal: this.#abort.signal, route: '/v1/responses', responseId: job.id, priorItems: job.priorItems as unknown as ResponseInputItem[] };
    // Streamed from the engine, so its events are stored (and can be followed) as they come.
    const body = { ...job.body, stream: true } as unknown as ResponsesRequestBody;
    for (;;) {
      try {
        let final: Record<string, unknown> | null = null;
        for await (const raw of await deps.engine.open(caller, responsesRequestOf(body), context)) {
          const event = raw.response ? { ...raw, response: asBackground(raw.response as Record<string, unknown>) } : raw;
          if (TERMINAL_EVENTS.has(event.type) && event.response) final = event.response as Record<string, unknown>;
          await this.#take(event);
        }
        return final ?? this.#failure({ code: 'server_error', message: 'The model stopped before the response ended.' });
      } catch (err) {
        if (this.#abort.signal.aborted) return this.#failure({ code: 'server_error', message: 'The background response was stopped.' });
        const held = heldByOtherCalls(err);
        if (held && this.#nextSeq === job.eventCount) {
          // Credit the payer's other calls hold: wait for some to come back, as a batch line does.
          await held.released(HELD_CREDIT_WAIT_MS, this.#abort.signal);
          continue;
        }
        deps.logger.warn({ err, responseId: job.id }, 'background response failed');
        return this.#failure(errorOf(err));
      }
    }
  }

  async #take(event: ResponseStreamEvent): Promise<void> {
    // A rerun: the events an earlier run stored (its opening ones) are not stored twice.
    if (event.sequence_number < this.job.eventCount) return;
    this.#nextSeq = event.sequence_number + 1;
    if (TERMINAL_EVENTS.has(event.type)) {
      this.#buffer.push({ seq: event.sequence_number, event: event as unknown as Record<string, unknown> });
      return;
    }
    if (event.response) {
      this.#latest = event.response as Record<string, unknown>;
      this.#latestChanged = true;
    }
    if (!OPENING_EVENTS.has(event.type)) this.#answerStarted = true;
    this.#buffer.push({ seq: event.sequence_number, event: event as unknown as Record<string, unknown> });
    // The opening events go out at once (the object turns in_progress); the rest in small groups.
    if (OPENING_EVENTS.has(event.type) || this.#buffer.length >= FLUSH_EVENTS) await this.#flush();
    else this.#timer ??= setTimeout(() => void this.#flush(), FLUSH_MS);
  }

  #flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const events = this.#buffer.splice(0);
    const resource = this.#latestChanged ? this.#latest : null;
    this.#latestChanged = false;
    const answerStarted = this.#answerStarted;
    this.#flushing = this.#flushing.then(async () => {
      if (events.length === 0 || this.#abort.signal.aborted) return;
      try {
        const kept = await this.deps.queue.append(this.deps.worker, this.job.id, events, resource, answerStarted);
        if (!kept) this.stop();
      } catch (err) {
        this.deps.logger.warn({ err, responseId: this.job.id }, 'could not store background response events');
        this.stop();
      }
    });
    return this.#flushing;
  }

  /** A failed object and its `response.failed` event, buffered for the settlement. */
  #failure(error: RunError): Record<string, unknown> {
    const resource = failedResource(this.#latest ?? this.job.resource, error);
    this.#buffer.push({ seq: this.#nextSeq, event: { type: 'response.failed', sequence_number: this.#nextSeq, response: resource } });
    this.#nextSeq += 1;
    return resource;
  }

  async #fail(error: RunError): Promise<void> {
    await this.#settle(this.#failure(error), null);
  }

  async #settle(resource: Record<string, unknown>, meter: LineMeter | null): Promise<boolean> {
    const { job, deps } = this;
    await this.#flushing;
    const usage = meter?.records ?? [];
    const nowMs = deps.clock.nowMs();
    const outbox = (meter?.outbox ?? []).map((message) => newOutboxEntry(message, nowMs));
    const events = this.#buffer.splice(0);
    const conversation = conversationOf(job.priorItems, job.inputItems, resource);
    const settled = await deps.queue.settle(deps.worker, job.id, { resource, conversation, events, usage, outbox });
    if (settled) deps.billing.committed(usage, outbox.length > 0);
    else deps.logger.info({ responseId: job.id }, 'background response was settled elsewhere; this run wrote nothing');
    return settled;
  }
}
