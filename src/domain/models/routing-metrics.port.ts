/** What the router across a model's deployments reports, by deployment id; observability implements it. */

/** Why a deployment was taken out for a while: its failures, an engine's Retry-After, or another replica's word. */
export type CooldownReason = 'failures' | 'retry_after' | 'shared';

export type AttemptOutcome = 'success' | 'failure' | 'rate_limited' | 'client_error' | 'context_length' | 'aborted';

export interface RoutingMetrics {
  attempt(model: string, deployment: string, outcome: AttemptOutcome): void;
  ttfb(deployment: string, seconds: number): void;
  cooled(deployment: string, reason: CooldownReason): void;
  inFlight(deployment: string, delta: number): void;
}
