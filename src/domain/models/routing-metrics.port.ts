/** What the router across a model's deployments reports, by deployment id; observability implements it. */

/** Why a deployment was taken out for a while: its failures, an engine's Retry-After, or another replica's word. */
export type CooldownReason = 'failures' | 'retry_after' | 'shared';

export type AttemptOutcome = 'success' | 'failure' | 'rate_limited' | 'client_error' | 'context_length' | 'aborted';

/**
 * What session affinity did with a turn: sent it to its pinned deployment (`hit`), placed
 * a new session (`new`), or moved the session because its deployment was cooling down,
 * at its max_concurrency, over its load bound, no longer configured, or failed the turn
 * (which another deployment then served).
 */
export type AffinityOutcome = 'hit' | 'new' | 'moved_cooled' | 'moved_full' | 'moved_overloaded' | 'moved_unknown' | 'moved_failed';

export interface RoutingMetrics {
  attempt(model: string, deployment: string, outcome: AttemptOutcome): void;
  ttfb(deployment: string, seconds: number): void;
  cooled(deployment: string, reason: CooldownReason): void;
  inFlight(deployment: string, delta: number): void;
  affinity(outcome: AffinityOutcome): void;
}
