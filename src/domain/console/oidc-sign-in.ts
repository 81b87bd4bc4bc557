/**
 * Console sign-in through the identity provider. `begin` keeps the flow (state, nonce,
 * PKCE verifier) under the hash of a random id the browser holds in a cookie; `complete`
 * takes it (once: a replayed callback finds nothing), has the provider verify the
 * callback, maps the claims to roles, provisions the user and opens their session. A
 * person the mapping gives nothing is refused.
 */
import { hash } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import { randomToken } from '../shared/ids.js';
import type { PeopleService } from '../people/people.service.js';
import type { User } from '../people/people.types.js';
import { grantsNothing, grantsOf } from '../people/role-mapping.js';
import type { RoleMapping } from '../people/role-mapping.types.js';
import type { IdentityClaims, IdentityProvider, SignInFlowStore } from './identity-provider.port.js';
import type { ConsoleSessions, SignedIn } from './sessions.js';

const FLOW_TTL_MS = 10 * 60_000;

export const signInRefused = (message: string, code: string) => new AppError('authentication', message, { code });

export interface OidcSignInDeps {
  provider: IdentityProvider;
  flows: SignInFlowStore;
  mapping: RoleMapping;
  people: PeopleService;
  sessions: ConsoleSessions;
  clock: Clock;
  /** The configured callback URL; null: the one the browser reached the start at. */
  redirectUrl: string | null;
}

export interface SignInOutcome {
  signedIn: SignedIn;
  user: User;
}

export class OidcSignIn {
  constructor(private readonly deps: OidcSignInDeps) {}

  get providerName(): string {
    return this.deps.provider.name;
  }

  /** The flow id for the browser's cookie, and where to send the browser. */
  /** `redirectUrl`: the configured one, else this server's callback as the browser reached it. */
  async begin(redirectUrl: string): Promise<{ flowId: string; authorizationUrl: string }> {
    const { flow, authorizationUrl } = await this.deps.provider.begin(this.deps.redirectUrl ?? redirectUrl);
    const flowId = randomToken(32);
    await this.deps.flows.insert(hashOf(flowId), flow, this.deps.clock.nowMs() + FLOW_TTL_MS);
    return { flowId, authorizationUrl };
  }

  /** Throws an AppError `authentication` (with `claims` when the token was good but maps to nothing) for every refusal. */
  async complete(flowId: string | undefined, callbackUrl: URL): Promise<SignInOutcome> {
    const flow = flowId ? await this.deps.flows.take(hashOf(flowId), this.deps.clock.nowMs()) : undefined;
    if (!flow) throw signInRefused('This sign-in has expired or was already used: start again', 'sign_in_flow_invalid');
    const claims = await this.deps.provider.complete(callbackUrl, flow);
    const grants = grantsOf(claims, this.deps.mapping);
    if (grantsNothing(grants)) {
      await this.deps.people.withdrawMapped(claims.iss, claims.sub);
      throw new UnmappedPerson(claims);
    }
    if (typeof claims.email !== 'string') throw signInRefused('The identity provider sent no email for this account: the email scope is needed', 'sign_in_no_email');
    const identity = { issuer: claims.iss, subject: claims.sub, email: claims.email, emailVerified: claims.email_verified === true, name: claims.name };
    const user = await this.deps.people.provision(identity, grants).catch((err: unknown) => {
      if (err instanceof AppError && err.kind === 'conflict') throw signInRefused('Another user has this email: ask an operator to link your account', 'sign_in_email_taken');
      throw err;
    });
    return { signedIn: await this.deps.sessions.signInUser(user.id), user };
  }
}

/** The token was good, but no rule maps the person to a role, and there is no default. */
export class UnmappedPerson extends AppError {
  constructor(readonly claims: IdentityClaims) {
    super('authentication', 'Your account has no role in Sluice: ask an operator to give you one', { code: 'sign_in_not_mapped' });
  }
}

const hashOf = (flowId: string): string => hash('sha256', flowId, 'hex');
