/**
 * A feature assembles itself: from the core's services it builds its own, and returns
 * them with everything the process needs from it: the route modules it adds to the API
 * and the admin API (bound to its services), scopes of its own, background workers,
 * outbox handlers and payer debits by kind, batch endpoints by url, readiness checks and
 * `close`. The list of
 * features is src/composition/features.ts; adding one is a file like the others and one
 * line there. A feature takes the parts of the core it needs (core-*.ts) and the earlier
 * features it builds on, typed (`Peers`).
 */
import type { BatchEndpoint } from '../domain/batches/batch-endpoints.js';
import type { LineMeterFactory } from '../domain/billing/meter-resolver.js';
import type { PayerKind } from '../domain/identity/caller.js';
import type { OutboxHandler } from '../domain/outbox/outbox.types.js';
import type { BoundRoutes } from '../http/route-module.js';
import type { ScopeDeclaration } from '../http/scopes/api-scope.js';
import type { PayerDebit } from '../storage/db/repositories/usage.repository.js';
import type { BackgroundWorker } from '../worker/background-worker.js';

/** The route modules every feature adds to the two shared surfaces. */
export interface SharedRoutes {
  /** Mounted under /v1, and in the console for project sessions. */
  api: readonly BoundRoutes[];
  /** Mounted under /admin/v1, and in the console for operator sessions. */
  admin: readonly BoundRoutes[];
}

export interface Feature<Services> {
  /** What the feature built: for other parts of the composition, the CLI and tests; route modules get their own narrow share. */
  services: Services;
  routes?: Partial<SharedRoutes>;
  /** The scopes the feature mounts; given every feature's shared routes, for scopes that mount them (/v1, the console). */
  scopes?(shared: SharedRoutes): readonly (ScopeDeclaration | null)[];
  workers?: readonly BackgroundWorker[];
  /** Settlement messages of these target kinds are delivered by these handlers. */
  outboxHandlers?: ReadonlyMap<string, OutboxHandler>;
  /** Usage records of these payer kinds are debited by these, in the record's transaction. */
  payerDebits?: ReadonlyMap<PayerKind, PayerDebit>;
  /** Batch lines paid by these payer kinds are metered by these. */
  lineMeters?: ReadonlyMap<PayerKind, LineMeterFactory>;
  /** Batch lines on these endpoints (urls) are run by these. */
  batchEndpoints?: ReadonlyMap<string, BatchEndpoint>;
  /** Named checks for /readyz: `ok`, or what is wrong. */
  readiness?(): Promise<Record<string, string>>;
  /** What /readyz shows beside the checks, never making the replica not ready (e.g. entries a background writer dropped). */
  notes?(): Record<string, string>;
  close?(): Promise<void>;
}

/**
 * The features a feature builds on, by their name in FEATURES, typed by their services
 * (e.g. `Peers<{ batches: BatchesParts }>`): FEATURES lists a feature after those it names,
 * and assemble checks that it does.
 */
export type Peers<Services> = { readonly [Name in keyof Services]: Feature<Services[Name]> };
