/**
 * MPP (the "Payment" HTTP authentication scheme) over MCP, in the shape `mppx`'s MCP client
 * (`McpClient.wrap`) reads: the challenge rides in a tool result's
 * `_meta["org.paymentauth/payment-required"]` (`{httpStatus, challenges}`), the client
 * retries with the credential in `params._meta["org.paymentauth/credential"]`, and the
 * served answer carries `_meta["org.paymentauth/receipt"]`. mppx's server transport would
 * answer the challenge as JSON-RPC error -32042 instead; MCP itself assigns -32042 (URL
 * elicitation required, in the JSON-RPC server-error range MCP uses for its own codes), so
 * the challenge is a tool result, which mppx's client reads too (docs/mcp.md).
 *
 * The storefront's MPP rail speaks HTTP headers (`WWW-Authenticate: Payment …`,
 * `Authorization: Payment …`, `Payment-Receipt`); this converts between the two.
 */
import type { Credential } from 'mppx';
import { invalidRequest } from '../../../domain/shared/errors.js';

export const MPP_CREDENTIAL_META = 'org.paymentauth/credential';
export const MPP_PAYMENT_REQUIRED_META = 'org.paymentauth/payment-required';
export const MPP_RECEIPT_META = 'org.paymentauth/receipt';

/** mppx is loaded by the first call that carries MPP: it brings viem, hundreds of modules a start would otherwise load. */
const mppx = () => import('mppx');

/** The MPP challenges of a purchase's 402 quote as `_meta`, or null when MPP is not offered. */
export async function mppChallengeMeta(headers: Readonly<Record<string, string>> | undefined): Promise<Record<string, unknown> | null> {
  const header = headers?.['www-authenticate'];
  if (header === undefined || !/^Payment\s/i.test(header)) return null;
  const { Challenge } = await mppx();
  return { [MPP_PAYMENT_REQUIRED_META]: { httpStatus: 402, challenges: Challenge.deserializeList(header) } };
}

/** The MPP credential a call's `_meta` presents, as the `Authorization: Payment …` header the rail reads. */
export async function mppAuthorization(meta: Readonly<Record<string, unknown>> | undefined): Promise<{ header: string; challengeId: string } | undefined> {
  const credential = meta && Object.hasOwn(meta, MPP_CREDENTIAL_META) ? meta[MPP_CREDENTIAL_META] : undefined;
  if (credential === undefined) return undefined;
  const { Credential } = await mppx();
  try {
    const header = Credential.serialize(credential as Credential.Credential);
    return { header, challengeId: Credential.deserialize(header).challenge.id };
  } catch {
    throw invalidRequest(`_meta["${MPP_CREDENTIAL_META}"] is not an MPP credential`, `_meta.${MPP_CREDENTIAL_META}`);
  }
}

/** What a payment settled over MPP adds to the answer's `_meta`. */
export async function mppReceiptMeta(headers: Readonly<Record<string, string>>, challengeId: string): Promise<Record<string, unknown>> {
  const receipt = headers['payment-receipt'];
  if (receipt === undefined) return {};
  const { Receipt } = await mppx();
  return { [MPP_RECEIPT_META]: { ...Receipt.deserialize(receipt), challengeId } };
}
