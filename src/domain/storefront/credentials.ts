/**
 * What a storefront request presents, read from `Authorization` and
 * `GW-Agent-Authorization` before anything is verified: an agent token, a receipt, or a
 * payment credential (MPP) with the agent token beside it. Exactly one agent token.
 */
import { isReceiptId } from './receipts.js';
import { invalidReceipt, invalidToken, storefrontError } from '../shared/storefront-errors.js';

export type Presented =
  | { kind: 'none' }
  | { kind: 'bearer'; token: string }
  | { kind: 'receipt'; receiptId: string }
  | { kind: 'payment'; bearer: string | null };

export const AGENT_AUTHORIZATION = 'gw-agent-authorization';
const TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;

/** The 401 for a call that needs an agent credential and has none. */
export function bearerRequired(hint: string, tokenUrl = '/oauth2/token') {
  return storefrontError('authentication', 'bearer_required', 'An agent credential is required', {
    hint,
    auth: {
      recipe: {
        tokenUrl,
        grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion: 'a JWT signed by your registered key: iss = sub = your agent id, aud = the token URL, exp at most 5 minutes ahead, a unique jti',
      },
      presentation: { scheme: 'Bearer', standardHeader: 'Authorization', alternateHeader: 'GW-Agent-Authorization' },
    },
  });
}

/** `<Scheme> <one credential>`; a second credential in the same header is refused. */
function split(value: string): { scheme: string; credential: string } {
  const match = /^([A-Za-z][A-Za-z0-9-]*)\s+(.*)$/.exec(value.trim());
  if (!match) throw invalidToken('malformed_agent_authorization', 'Expected "<scheme> <credential>"');
  const credential = match[2]!.trim();
  if (/[\s,]/.test(credential)) {
    throw invalidToken('combined_authorization_unsupported', 'One header carries one credential');
  }
  return { scheme: match[1]!.toLowerCase(), credential };
}

function bearerOf(value: string): string {
  const { scheme, credential } = split(value);
  if (scheme !== 'bearer' || !TOKEN.test(credential)) {
    throw invalidToken('malformed_agent_authorization', 'GW-Agent-Authorization must be "Bearer <access token>"');
  }
  return credential;
}

export function presentedCredential(authorization: string | undefined, agentAuthorization: string | undefined): Presented {
  const agent = agentAuthorization === undefined ? null : bearerOf(agentAuthorization);
  if (authorization === undefined) return agent === null ? { kind: 'none' } : { kind: 'bearer', token: agent };
  const { scheme, credential } = split(authorization);
  switch (scheme) {
    case 'bearer':
      if (agent !== null) throw invalidToken('conflicting_agent_credentials', 'Send the agent token in Authorization or GW-Agent-Authorization, not both');
      if (!TOKEN.test(credential)) throw invalidToken('malformed_agent_authorization', 'Authorization must be "Bearer <access token>"');
      return { kind: 'bearer', token: credential };
    case 'receipt':
      if (agent !== null) throw invalidToken('conflicting_agent_credentials', 'A receipt is not sent with an agent token');
      if (!isReceiptId(credential)) throw invalidReceipt();
      return { kind: 'receipt', receiptId: credential };
    case 'payment':
      return { kind: 'payment', bearer: agent };
    default:
      throw invalidToken('malformed_agent_authorization', 'Authorization must be "Bearer <access token>", "Receipt <receipt>" or "Payment <credential>"');
  }
}
