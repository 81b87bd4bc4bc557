/**
 * Who is calling and who pays. An authentication strategy turns a request into a
 * Caller; every service takes the Caller and never learns which strategy admitted it.
 * The Meter travels with the Caller because the way a call is paid for belongs to the
 * scope the caller came through (project credits on /v1, the intermediary on the
 * gateway, prepaid Credits on the storefront), not to the route that serves it.
 */
import type { Meter } from '../billing/meter.js';

export type CallerKind = 'api_key' | 'gateway_agent' | 'storefront_agent' | 'receipt' | 'batch_line' | 'operator';

/** The account a call's cost is charged to. */
export type Payer =
  | { kind: 'project'; projectId: string }
  | { kind: 'intermediary'; intermediaryId: string }
  | { kind: 'receipt'; receiptId: string };

export interface Principal {
  kind: CallerKind;
  /** The tenant whose files, batches and usage the caller sees. */
  projectId: string;
  /** The API key that made the call (or created the batch), when one did. */
  keyId: string | null;
  /** The caller's own identity where it is not a key (an agent id, a receipt id); null otherwise. */
  subject: string | null;
  payer: Payer;
}

export interface Caller {
  principal: Principal;
  meter: Meter;
}

/** The principal of an API key of a project: the project is both the tenant and the payer. */
export function apiKeyPrincipal(projectId: string, keyId: string | null, kind: CallerKind = 'api_key'): Principal {
  return { kind, projectId, keyId, subject: null, payer: { kind: 'project', projectId } };
}

/**
 * The operator (the admin token, or a console session opened with it). On the admin
 * routes the project comes from the path and `projectId` is empty; in the console the
 * operator acts in the project it chose, paying from that project's credit, with no key.
 */
export function operatorPrincipal(projectId = ''): Principal {
  return { kind: 'operator', projectId, keyId: null, subject: 'operator', payer: { kind: 'project', projectId } };
}

/** The key a rate limit counts under: the key, else the caller's subject, else its project. */
export const rateLimitKeyOf = (principal: Principal): string => principal.keyId ?? principal.subject ?? principal.projectId;
