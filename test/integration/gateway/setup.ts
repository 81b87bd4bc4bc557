/**
 * Shared setup of the gateway suites: a fake upstream (the models), a fake intermediary
 * (allowance and usage reports) and a Sluice with the gateway configured, plus a signed
 * request helper built on the documented signer (test/helpers/fake-intermediary.ts).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { READ_KEY, WRITE_KEY, sign, startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { inferenceYaml } from '../inference/setup.js';

export const SECRET = 'gwsec_integration_0123456789';
export const KID = 'k1';
export const PREVIOUS_SECRET = 'gwsec_previous_0123456789';

export interface GatewayEnv {
  upstream: FakeUpstream;
  intermediary: FakeIntermediary;
  server: TestServer;
  close(): Promise<void>;
}

/** Env of a Sluice whose gateway talks to `intermediaryUrl`. */
export function gatewayEnvVars(intermediaryUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    GATEWAY_SIGNING_SECRETS: JSON.stringify({ k0: PREVIOUS_SECRET, [KID]: SECRET }),
    GATEWAY_API_URL: intermediaryUrl,
    GATEWAY_READ_KEY: READ_KEY,
    GATEWAY_WRITE_KEY: WRITE_KEY,
    GATEWAY_CHECK_TIMEOUT_MS: '400',
    ...extra,
  };
}

export async function startGatewayEnv(
  options: { env?: Record<string, string>; yamlTail?: string; startWorkers?: boolean; models?: Record<string, Record<string, unknown>> } = {},
): Promise<GatewayEnv> {
  const upstream = await startFakeUpstream();
  const intermediary = await startFakeIntermediary();
  const server = await startTestServer({
    yaml: inferenceYaml(upstream.baseUrl, options.models) + (options.yamlTail ?? ''),
    env: gatewayEnvVars(intermediary.baseUrl, options.env),
    startWorkers: options.startWorkers ?? true,
  });
  return {
    upstream,
    intermediary,
    server,
    async close() {
      await server.close();
      await intermediary.close();
      await upstream.close();
    },
  };
}

export interface SignedOptions {
  agentId?: string | null;
  requestId?: string | null;
  secret?: string;
  kid?: string;
  t?: number | string;
  /** Replaces the computed gw-signature (null: none sent). */
  signature?: string | null;
  /** Body bytes sent instead of the signed ones. */
  sentBody?: Buffer | string;
  headers?: Record<string, string>;
  method?: string;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A signed POST of `body` (JSON-encoded unless a string or Buffer) to `path` on the server. */
export async function signedCall(baseUrl: string, path: string, body: unknown, options: SignedOptions = {}) {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const requestId = options.requestId === undefined ? `gwreq_${randomUUID()}` : options.requestId;
  const agentId = options.agentId === undefined ? 'agt_1' : options.agentId;
  const method = options.method ?? 'POST';
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const signature =
    options.signature !== undefined
      ? options.signature
      : sign({ secret: options.secret ?? SECRET, kid: options.kid ?? KID, t: options.t ?? nowSeconds(), method, path, body: bytes, requestId, agentId });
  if (signature !== null) headers['gw-signature'] = signature;
  if (requestId !== null) headers['gw-request-id'] = requestId;
  if (agentId !== null) headers['gw-agent-id'] = agentId;
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: options.sentBody ?? bytes });
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* stays text */
  }
  return { status: response.status, headers: response.headers, body: parsed, requestId, signature };
}

/** A signed streamed POST read with node:http, which exposes trailers. */
export function signedStream(baseUrl: string, path: string, body: unknown, requestId: string, agentId = 'agt_stream') {
  const bytes = Buffer.from(JSON.stringify(body));
  const headers = {
    'content-type': 'application/json',
    'gw-request-id': requestId,
    'gw-agent-id': agentId,
    'gw-signature': sign({ secret: SECRET, kid: KID, t: nowSeconds(), method: 'POST', path, body: bytes, requestId, agentId }),
  };
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; trailers: NodeJS.Dict<string>; text: string }>((resolve, reject) => {
    const request = http.request(`${baseUrl}${path}`, { method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, text }));
    });
    request.on('error', reject);
    request.end(bytes);
  });
}
