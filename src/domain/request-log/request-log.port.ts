/**
 * The request log's ports: the sink the routes submit closed stories to (never awaited,
 * never failing a call), and the store the background writer and the readers use.
 */
import type { Page } from '../shared/pagination.js';
import type { CallStory } from './call-story.js';
import type { BodyMode, LoggingSettings, RequestLogEntry, RequestLogFilter, RequestSession } from './request-log.types.js';

export interface RequestLogSink {
  /** What the project keeps of bodies now (its settings as last read; `off` until read). Synchronous: asked on the request path. */
  bodiesFor(projectId: string): BodyMode;
  /** Queues the story's entry (closed with `status`); drops and counts it when the queue is full. Never throws. */
  submit(story: CallStory, status: number): void;
}

/** A body as stored: inline JSON text up to the inline limit, else a preview and the blob holding the whole. */
export interface StoredBody {
  mode: Exclude<BodyMode, 'off'>;
  request: string;
  response: string;
  truncated: boolean;
  blobKey: string | null;
}

export interface RequestLogStore {
  /** Writes the entries and their bodies' rows in one statement per table. */
  writeMany(writes: readonly { entry: RequestLogEntry; body: StoredBody | null }[]): Promise<void>;
  /** Newest first; `after` is the last id of the previous page (null: not an id of this filter's project). */
  list(filter: RequestLogFilter, limit: number, after: string | null): Promise<Page<RequestLogEntry> | null>;
  get(id: string, projectId: string | null): Promise<RequestLogEntry | null>;
  body(id: string, projectId: string | null): Promise<StoredBody | null>;
  session(sessionId: string, projectId: string | null, limit: number): Promise<RequestSession | null>;
  /** Deletes the entries (and body rows) created before each project's retention; returns the blob keys of the bodies deleted and how many entries went. */
  sweep(nowMs: number, defaultRetentionDays: number, limit: number): Promise<{ deleted: number; blobKeys: string[] }>;
  settings(): Promise<Map<string, LoggingSettings>>;
  saveSettings(projectId: string, settings: LoggingSettings): Promise<void>;
}
