/**
 * A fake x402 facilitator on loopback (plain node:http): `/supported` lists `exact` on
 * the given network; `/verify` and `/settle` check the EIP-3009 authorization offline
 * (network, recipient, amount, validity window and the EIP-712 signature with viem's
 * verifyTypedData); `/settle` refuses a nonce it already settled. No chain is touched.
 *
 *   const facilitator = await startFakeFacilitator({ network: 'eip155:84532' });
 *   facilitator.mode = 'timeout' | 'error-500' | 'verify-invalid' | 'settle-fail' | 'ok';
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyTypedData, type Address, type Hex } from 'viem';

export type FacilitatorMode = 'ok' | 'timeout' | 'error-500' | 'verify-invalid' | 'settle-fail';

export interface FakeFacilitator {
  url: string;
  mode: FacilitatorMode;
  /** Settled nonces (lower-case). */
  settled: Set<string>;
  calls: { path: string; body: any }[];
  close(): Promise<void>;
}

const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The reason the authorization is not valid for the requirements, or null. */
async function check(body: any, network: string): Promise<{ reason: string | null; payer?: string }> {
  const payload = body?.paymentPayload;
  const req = body?.paymentRequirements;
  const auth = payload?.payload?.authorization;
  if (!auth || typeof payload?.payload?.signature !== 'string') return { reason: 'invalid_payload' };
  if (req?.network !== network || payload?.accepted?.network !== network) return { reason: 'invalid_network' };
  if (String(auth.to).toLowerCase() !== String(req.payTo).toLowerCase()) return { reason: 'invalid_exact_evm_payload_recipient_mismatch' };
  if (String(auth.value) !== String(req.amount)) return { reason: 'invalid_exact_evm_payload_authorization_value_mismatch' };
  const now = Math.floor(Date.now() / 1000);
  if (Number(auth.validBefore) < now) return { reason: 'invalid_exact_evm_payload_authorization_valid_before' };
  const ok = await verifyTypedData({
    address: auth.from as Address,
    domain: { name: req.extra?.name, version: req.extra?.version, chainId: Number(network.split(':')[1]), verifyingContract: req.asset as Address },
    types: TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: auth.from,
      to: auth.to,
      value: BigInt(auth.value),
      validAfter: BigInt(auth.validAfter),
      validBefore: BigInt(auth.validBefore),
      nonce: auth.nonce as Hex,
    },
    signature: payload.payload.signature as Hex,
  }).catch(() => false);
  return ok ? { reason: null, payer: auth.from } : { reason: 'invalid_exact_evm_payload_signature' };
}

export async function startFakeFacilitator(options: { network?: string } = {}): Promise<FakeFacilitator> {
  const network = options.network ?? 'eip155:84532';
  const state: FakeFacilitator = { url: '', mode: 'ok', settled: new Set(), calls: [], close: async () => {} };
  const stalled = new Set<http.ServerResponse>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
    const path = (req.url ?? '').split('?')[0]!;
    state.calls.push({ path, body });
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (path === '/supported') return send(200, { kinds: [{ x402Version: 2, scheme: 'exact', network }], extensions: [], signers: { 'eip155:*': [] } });
    if (state.mode === 'timeout') return void stalled.add(res);
    if (state.mode === 'error-500') return send(500, { error: 'facilitator exploded' });
    const { reason, payer } = await check(body, network);
    if (path === '/verify') {
      if (state.mode === 'verify-invalid') return send(200, { isValid: false, invalidReason: 'insufficient_funds', payer });
      return send(200, reason ? { isValid: false, invalidReason: reason, payer } : { isValid: true, payer });
    }
    if (path === '/settle') {
      const nonce = String(body?.paymentPayload?.payload?.authorization?.nonce ?? '').toLowerCase();
      const fail = (errorReason: string) => send(200, { success: false, errorReason, transaction: '', network, payer });
      if (state.mode === 'settle-fail') return fail('unexpected_settle_error');
      if (reason) return fail(reason);
      if (state.settled.has(nonce)) return fail('invalid_transaction_state');
      state.settled.add(nonce);
      return send(200, { success: true, payer, transaction: `0x${nonce.slice(2, 66).padEnd(64, '0')}`, network, amount: body.paymentRequirements.amount });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const res of stalled) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
