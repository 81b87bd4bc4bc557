/**
 * The storefront's agent tokens as the domain and the HTTP layer see them: the RFC 7523
 * JWT-bearer grant exchanged for an access token, and an access token verified to the
 * agent it names. src/adapters/jose implements it.
 */

/** The grant type of the token exchange (RFC 7523). */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface AccessToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export interface AgentTokenService {
  /** Exchanges a token request's form (grant_type, assertion) for an access token; throws the grant's own errors. */
  exchange(form: Record<string, unknown>, tokenUrl: string, audience: string): Promise<AccessToken>;
  /** The agent id an access token names, for this audience; throws invalid_token otherwise. */
  verify(token: string, audience: string): string | Promise<string>;
}
