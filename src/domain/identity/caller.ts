/**
 * Who is calling and who pays. An authentication strategy turns a request into a
 * Caller; every service takes the Caller and never learns which strategy admitted it.
 * The Meter travels with the Caller because the way a call is paid for belongs to the
 * scope the caller came through (project credits on /v1, the intermediary on the
 * gateway, prepaid Credits on the storefront), not to the route that serves it.
 */
import type { Meter } from '../billing/meter.js';
import type { KeyPolicy } from './key-policy.types.js';
import type { ProjectRole } from '../people/people.types.js';
import type { CallStory } from '../request-log/call-story.js';

/**
 * The kinds of callers, registered by the features whose strategies admit them: each adds
 * its kinds to this interface (declaration merging, e.g. src/domain/gateway/kinds.ts), so
 * no union here is edited for a new one.
 */
export interface CallerKinds {
  api_key: true;
  batch_line: true;
  console: true;
  operator: true;
}

export type CallerKind = keyof CallerKinds;

/**
 * The kinds of payers, registered the same way: `project` is the core's; a feature whose
 * callers pay some other way adds its kind here. A payer of kind K names its account in
 * the field `${K}Id`, so storing and reading a payer needs no switch on its kind.
 */
export interface PayerKinds {
  project: true;
}

export type PayerKind = keyof PayerKinds & string;

/** The account a call's cost is charged to. */
export type Payer = { [K in PayerKind]: { kind: K } & { [F in `${K}Id`]: string } }[PayerKind];

/** A payer as stored: its kind and the id of the account of that kind. */
export interface PayerRef {
  kind: PayerKind;
  id: string;
}

const idFieldOf = (kind: string): string => `${kind}Id`;

export function payerRef(payer: Payer): PayerRef {
  return { kind: payer.kind, id: (payer as unknown as Record<string, string>)[idFieldOf(payer.kind)]! };
}

export function payerOf(ref: PayerRef): Payer {
  return { kind: ref.kind, [idFieldOf(ref.kind)]: ref.id } as unknown as Payer;
}

export interface Principal {
  kind: CallerKind;
  /** The tenant whose files, batches and usage the caller sees. */
  projectId: string;
  /** The API key that made the call (or created the batch), when one did. */
  keyId: string | null;
  /** The caller's own identity where it is not a key (an agent id, a receipt id); null otherwise. */
  subject: string | null;
  payer: Payer;
  /** The policy of the API key that made the call, when it has one (models, budget, rates, tags). */
  policy?: KeyPolicy;
  /** On an admin route, the role in the route's project of the user (not an operator) whose session made the call; absent for everyone else. */
  projectRole?: ProjectRole;
}

/**
 * Where a call's admission and settlement put what they have to say to the client (a
 * lowered output cap, the usage an intermediary bills): headers on a JSON answer, HTTP
 * trailers at the end of a stream. Absent where nobody is listening (batch lines).
 */
export interface ReplyHeaders {
  set(headers: Readonly<Record<string, string>>): void;
}

export interface Caller {
  principal: Principal;
  meter: Meter;
  reply?: ReplyHeaders;
  /** The call's story for the request log (the meter tells it the hold, the wait and the settlement); absent where no call is logged. */
  story?: CallStory;
}

/** The principal of an API key of a project: the project is both the tenant and the payer. */
export function apiKeyPrincipal(projectId: string, keyId: string | null, kind: CallerKind = 'api_key'): Principal {
  return { kind, projectId, keyId, subject: null, payer: { kind: 'project', projectId } };
}

/**
 * The operator: `operator` on the admin routes (the admin token, or a console session
 * opened with it), where the project comes from the path and `projectId` is empty;
 * `console` when an operator's console session acts in the project it chose, paying from
 * that project's credit, with no key.
 */
export function operatorPrincipal(projectId = '', kind: 'operator' | 'console' = 'operator'): Principal {
  return { kind, projectId, keyId: null, subject: 'operator', payer: { kind: 'project', projectId } };
}

/** The key a rate limit counts under: the key, else the caller's subject, else its project. */
export const rateLimitKeyOf = (principal: Principal): string => principal.keyId ?? principal.subject ?? principal.projectId;
