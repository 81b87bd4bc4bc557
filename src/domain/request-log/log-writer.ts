/**
 * The request log's writer, off the hot path: a submitted story is queued in memory and
 * written later in batches (one multi-row insert per table per batch) by one flush at a
 * time, every interval or as soon as a batch is full. The queue is bounded: while the
 * store is slow or down, what does not fit is dropped and counted, and a batch the store
 * refuses is dropped and counted too. A call never waits for the log and never fails
 * because of it. Bodies are serialized, redacted and (when large) put in the blob store
 * here, in the flush, never on the request.
 */
import type { BlobStore } from '../files/blob-store.port.js';
import type { Clock } from '../shared/clock.js';
import type { CallStory } from './call-story.js';
import { redactJson } from './redaction.js';
import type { RequestLogSink, RequestLogStore, StoredBody } from './request-log.port.js';
import type { BodyMode, LoggingSettings, RequestLogEntry } from './request-log.types.js';

export interface LogWriterSettings {
  /** false: the log is switched off; nothing is queued and every project's bodies are `off`. */
  enabled: boolean;
  batchSize: number;
  flushIntervalMs: number;
  maxQueue: number;
  /** A body side longer than this (JSON text, characters) goes to the blob store; a preview this long stays inline. */
  inlineBodyBytes: number;
  /** A body side longer than this is cut (and marked truncated). */
  maxBodyBytes: number;
  defaults: LoggingSettings;
}

export interface LogWriterDeps {
  store: RequestLogStore;
  blobs: BlobStore;
  clock: Clock;
  settings: LogWriterSettings;
  /** Told how many entries were dropped (a full queue, a failed write). */
  dropped(count: number): void;
  /** Told of a failed write, once per batch. */
  failed(err: unknown): void;
}

interface Queued {
  story: CallStory;
  entry: RequestLogEntry;
  mode: BodyMode;
}

/** How long close() waits for the last entries to be written before leaving them. */
const CLOSE_WAIT_MS = 5_000;

export class RequestLogWriter implements RequestLogSink {
  #queue: Queued[] = [];
  #flushing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #projects = new Map<string, LoggingSettings>();
  #droppedTotal = 0;
  #lastDropAtMs: number | null = null;

  constructor(private readonly deps: LogWriterDeps) {}

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.flush(), this.deps.settings.flushIntervalMs);
    this.#timer.unref();
  }

  /** The projects' settings as last read from the store. */
  useSettings(settings: Map<string, LoggingSettings>): void {
    this.#projects = settings;
  }

  settingsOf(projectId: string): LoggingSettings {
    return this.#projects.get(projectId) ?? this.deps.settings.defaults;
  }

  bodiesFor(projectId: string): BodyMode {
    return this.deps.settings.enabled ? this.settingsOf(projectId).bodies : 'off';
  }

  submit(story: CallStory, status: number): void {
    if (!this.deps.settings.enabled) return;
    const projectId = story.opening.principal.projectId;
    const mode = this.bodiesFor(projectId);
    const entry = story.close(status, mode !== 'off');
    if (entry === null) return;
    if (this.#queue.length >= this.deps.settings.maxQueue) {
      this.#drop(1);
      return;
    }
    this.#queue.push({ story, entry, mode });
    if (this.#queue.length >= this.deps.settings.batchSize && this.#flushing === null) setImmediate(() => void this.flush());
  }

  /** Entries dropped since start, the time of the last drop, and what waits to be written. */
  gap(): { dropped: number; lastDropAtMs: number | null; queued: number } {
    return { dropped: this.#droppedTotal, lastDropAtMs: this.#lastDropAtMs, queued: this.#queue.length };
  }

  /** Writes what is queued, a batch at a time; a flush already under way is joined, not doubled. */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing;
    if (this.#queue.length === 0) return Promise.resolve();
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    let timeout: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timeout = setTimeout(resolve, CLOSE_WAIT_MS);
      timeout.unref();
    });
    await Promise.race([this.flush().then(() => this.flush()), waited]);
    clearTimeout(timeout);
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.deps.settings.batchSize);
      try {
        const writes = await Promise.all(batch.map(async (q) => ({ entry: q.entry, body: await this.#bodyOf(q) })));
        await this.deps.store.writeMany(writes);
      } catch (err) {
        this.#drop(batch.length);
        this.deps.failed(err);
      }
    }
  }

  #drop(count: number): void {
    this.#droppedTotal += count;
    this.#lastDropAtMs = this.deps.clock.nowMs();
    this.deps.dropped(count);
  }

  async #bodyOf({ story, entry, mode }: Queued): Promise<StoredBody | null> {
    if (mode === 'off') return null;
    const secrets = story.secrets;
    const response = story.events ?? story.responseBody;
    const asKept = (value: unknown) => JSON.stringify((mode === 'redacted' ? redactJson(value, secrets) : value) ?? null);
    const { inlineBodyBytes, maxBodyBytes } = this.deps.settings;
    const request = cut(asKept(story.requestBody), maxBodyBytes);
    const answer = cut(asKept(response), maxBodyBytes);
    const truncated = request.cut || answer.cut;
    if (request.text.length + answer.text.length <= inlineBodyBytes) return { mode, request: request.text, response: answer.text, truncated, blobKey: null };
    const blobKey = `request-log/${entry.projectId}/${entry.id}.json`;
    await this.deps.blobs.put(blobKey, once(JSON.stringify({ request: request.text, response: answer.text })));
    const half = Math.floor(inlineBodyBytes / 2);
    return { mode, request: request.text.slice(0, half), response: answer.text.slice(0, half), truncated, blobKey };
  }
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

function cut(text: string, max: number): { text: string; cut: boolean } {
  return text.length <= max ? { text, cut: false } : { text: text.slice(0, max), cut: true };
}
