/** The identity provider the console signs users in with (OIDC: src/adapters/oidc), and where a sign-in waits between its start and its callback. */

/** What a sign-in keeps between the redirect to the provider and its callback. */
export interface SignInFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Where the provider returns the browser: the token request names it again. */
  redirectUrl: string;
}

/** The claims of a verified ID token: `iss` and `sub` always, and whatever else the provider sent. */
export type IdentityClaims = Readonly<Record<string, unknown>> & { iss: string; sub: string };

export interface IdentityProvider {
  /** The name the sign-in button shows. */
  readonly name: string;
  /** A new flow returning to `redirectUrl`, and the provider's authorization URL for it (authorization code, PKCE, state and nonce). */
  begin(redirectUrl: string): Promise<{ flow: SignInFlow; authorizationUrl: string }>;
  /**
   * The claims of the person the callback signs in: the code exchanged (with the flow's
   * PKCE verifier), and the state, the ID token's signature, expiry, audience and nonce
   * checked. Throws an AppError `authentication` saying which check failed.
   */
  complete(callbackUrl: URL, flow: SignInFlow): Promise<IdentityClaims>;
}

export interface SignInFlowStore {
  insert(idHash: string, flow: SignInFlow, expiresAtMs: number): Promise<void>;
  /** The flow if it is there and unexpired, removed in the same step (a flow is used once). */
  take(idHash: string, nowMs: number): Promise<SignInFlow | undefined>;
}
