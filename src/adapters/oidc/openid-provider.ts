/**
 * The console's identity provider over OpenID Connect, with `openid-client`: discovery
 * (once, retried after a failure), the authorization-code flow with PKCE (S256), `state`
 * and `nonce`, and the ID token verified (signature against the provider's published
 * keys, issuer, audience, expiry, nonce). Its failures become `authentication` refusals
 * that say which check failed. Plain http is accepted only for an issuer on loopback.
 */
import * as client from 'openid-client';
import { AppError } from '../../domain/shared/errors.js';
import type { IdentityClaims, IdentityProvider, SignInFlow } from '../../domain/console/identity-provider.port.js';

export interface OpenIdProviderOptions {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  scopes: readonly string[];
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

const refused = (message: string, code: string, cause: unknown) => new AppError('authentication', message, { code, cause });

/** The refusal a failed callback gets, by what openid-client (or oauth4webapi under it) found. */
function refusalOf(err: unknown): AppError {
  const chain: Array<{ code?: unknown; message?: unknown; error?: unknown; name?: unknown }> = [];
  for (let at: unknown = err; at instanceof Error && chain.length < 4; at = at.cause) chain.push(at as never);
  const text = chain.map((e) => String(e.message)).join(' | ');
  const codes = new Set(chain.map((e) => e.code));
  if (codes.has('OAUTH_RESPONSE_BODY_ERROR')) {
    return refused('The identity provider refused the authorization code (already used, or expired): start again', 'sign_in_code_rejected', err);
  }
  if (codes.has('OAUTH_AUTHORIZATION_RESPONSE_ERROR')) return refused('The identity provider did not sign you in', 'sign_in_denied', err);
  if (/signature verification failed/i.test(text)) return refused('The ID token failed verification: its signature does not match the identity provider\'s keys', 'sign_in_token_invalid', err);
  if (codes.has('OAUTH_JWT_TIMESTAMP_CHECK_FAILED')) return refused('The ID token has expired', 'sign_in_token_expired', err);
  if (/"state"/.test(text)) return refused('The sign-in\'s state does not match: start again', 'sign_in_state_mismatch', err);
  if (/nonce|"aud"|"iss"|issuer/i.test(text)) return refused('The ID token is not for this sign-in', 'sign_in_token_invalid', err);
  if (codes.has('OAUTH_INVALID_RESPONSE') || codes.has('OAUTH_PARSE_ERROR')) return refused('The identity provider\'s answer was not valid', 'sign_in_token_invalid', err);
  return new AppError('upstream', 'The identity provider could not be reached', { code: 'sign_in_provider_unreachable', cause: err });
}

export class OpenIdProvider implements IdentityProvider {
  #configuration: Promise<client.Configuration> | null = null;

  constructor(private readonly options: OpenIdProviderOptions) {}

  get name(): string {
    return this.options.name;
  }

  async begin(redirectUrl: string): Promise<{ flow: SignInFlow; authorizationUrl: string }> {
    const configuration = await this.#discovered();
    const flow: SignInFlow = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier(), redirectUrl };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUrl,
      scope: this.options.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { flow, authorizationUrl: url.href };
  }

  async complete(callbackUrl: URL, flow: SignInFlow): Promise<IdentityClaims> {
    const configuration = await this.#discovered();
    // The callback's own query, against the redirect URL the provider was given.
    const current = new URL(flow.redirectUrl);
    current.search = callbackUrl.search;
    let claims: client.IDToken | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (err) {
      throw refusalOf(err);
    }
    if (!claims) throw refused('The identity provider sent no ID token', 'sign_in_token_invalid', null);
    return claims as unknown as IdentityClaims;
  }

  #discovered(): Promise<client.Configuration> {
    this.#configuration ??= this.#discover().catch((err: unknown) => {
      this.#configuration = null;
      throw new AppError('upstream', 'The identity provider could not be reached', { code: 'sign_in_provider_unreachable', cause: err });
    });
    return this.#configuration;
  }

  async #discover(): Promise<client.Configuration> {
    const issuer = new URL(this.options.issuer);
    const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
    const { clientSecret } = this.options;
    // Non-repudiation checks: the ID token's signature is verified against the provider's keys even though it came straight from the token endpoint.
    return client.discovery(issuer, this.options.clientId, clientSecret ?? undefined, clientSecret === null ? client.None() : undefined, {
      execute: insecure ? [client.allowInsecureRequests, client.enableNonRepudiationChecks] : [client.enableNonRepudiationChecks],
      timeout: 10,
    });
  }
}
