/**
 * The console's sign-in through an identity provider, `sign_in.oidc:`: the provider
 * (issuer, client, scopes, redirect URL) and how its claims map to roles. The client
 * secret is read from SLUICE_OIDC_CLIENT_SECRET, never from the file.
 */
import { Type } from '@sinclair/typebox';
import type { ClaimMatch, RoleMapping } from '../domain/people/role-mapping.types.js';
import { configSection } from './section.js';

export interface OidcConfig extends RoleMapping {
  providerName: string;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  scopes: readonly string[];
  redirectUrl: string | null;
}

export interface SignInConfig {
  oidc: OidcConfig | null;
}

const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')]);
const Claim = { claim: Type.String({ minLength: 1, maxLength: 100, description: 'a claim of the ID token, e.g. `groups` or `email`' }), value: Type.String({ minLength: 1, maxLength: 500, description: 'matches the claim, or an item of a list claim' }) };
const Uuid = Type.String({ pattern: '^[0-9a-fA-F-]{36}$', description: 'a project id' });

const OidcSchema = Type.Object(
  {
    provider_name: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'the sign-in button says "Sign in with <provider_name>" (default "your identity provider")' })),
    issuer: Type.String({ minLength: 1, description: 'the issuer URL (https; http only on loopback); discovery reads <issuer>/.well-known/openid-configuration' }),
    client_id: Type.String({ minLength: 1 }),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'default [openid, email, profile]' })),
    redirect_url: Type.Optional(Type.String({ minLength: 1, description: 'this server\'s https://<host>/console/api/session/oidc/callback, as registered with the provider (default: that path on the host the browser reached)' })),
    operators: Type.Optional(Type.Array(Type.Object(Claim, { additionalProperties: false }), { description: 'people matching any of these are operators' })),
    roles: Type.Optional(Type.Array(Type.Object({ ...Claim, project: Uuid, role: Role }, { additionalProperties: false }), { description: 'people matching a rule get its role in its project (the highest wins)' })),
    default_role: Type.Optional(Type.Union([Type.Null(), Type.Object({ project: Uuid, role: Role }, { additionalProperties: false })], { description: 'the role of people no rule maps; absent or null: they are refused' })),
  },
  { additionalProperties: false },
);

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function checkUrl(text: string, key: string, problems: string[]): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push(`${key}: not a URL`);
    return;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) problems.push(`${key}: must be https (http only on loopback)`);
}

export const signInSection = configSection({
  key: 'sign_in',
  schema: Type.Object({ oidc: Type.Optional(OidcSchema) }, { additionalProperties: false }),
  resolve: ({ file, env, problems }): SignInConfig => {
    const oidc = file?.oidc;
    if (!oidc) return { oidc: null };
    checkUrl(oidc.issuer, 'sign_in.oidc.issuer', problems);
    if (oidc.redirect_url !== undefined) checkUrl(oidc.redirect_url, 'sign_in.oidc.redirect_url', problems);
    if (oidc.scopes && !oidc.scopes.includes('openid')) problems.push('sign_in.oidc.scopes: must include openid');
    const claimMatch = ({ claim, value }: ClaimMatch): ClaimMatch => ({ claim, value });
    return {
      oidc: {
        providerName: oidc.provider_name ?? 'your identity provider',
        issuer: oidc.issuer,
        clientId: oidc.client_id,
        clientSecret: env.SLUICE_OIDC_CLIENT_SECRET || null,
        scopes: oidc.scopes ?? ['openid', 'email', 'profile'],
        redirectUrl: oidc.redirect_url ?? null,
        operators: (oidc.operators ?? []).map(claimMatch),
        roles: (oidc.roles ?? []).map((r) => ({ claim: r.claim, value: r.value, project: r.project.toLowerCase(), role: r.role })),
        defaultRole: oidc.default_role ? { project: oidc.default_role.project.toLowerCase(), role: oidc.default_role.role } : null,
      },
    };
  },
});
