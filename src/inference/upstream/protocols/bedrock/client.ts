/**
 * The AWS SDK's Bedrock runtime client, one per region, endpoint and timeout: SigV4
 * signing, the event-stream decoding of ConverseStream and the credential chain are the
 * SDK's (environment, shared config and SSO, web identity, container and instance roles),
 * not re-implemented here. The SDK's own retries are off: the router retries, on another
 * deployment when there is one, and counts the failures for cooldowns.
 *
 * HTTP/1.1 with keep-alive (the SDK's NodeHttpHandler) rather than the Bedrock client's
 * default HTTP/2 handler: Converse and ConverseStream need no HTTP/2 (only the
 * bidirectional stream, which Sluice does not use), and the HTTP/2 handler took 2–6 ms a
 * call against the 0.8 ms of HTTP/1.1 on a loopback server (bench/bedrock.bench.ts).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { Deployment } from '../../../../domain/models/model-spec.types.js';

/** Bedrock's own endpoint in a region (the config's default base_url of a bedrock deployment): the SDK resolves it itself. */
const regionalEndpoint = (region: string): string => `https://bedrock-runtime.${region}.amazonaws.com`;

const REDACTED = '[redacted]';
const CONNECT_TIMEOUT_MS = 10_000;
const SOCKETS_PER_CLIENT = 256;

export class BedrockClients {
  readonly #clients = new Map<string, BedrockRuntimeClient>();

  /** The client for one deployment: its region, its endpoint when it overrides Bedrock's own, its timeout. */
  for(deployment: Deployment): BedrockRuntimeClient {
    const region = deployment.region ?? 'us-east-1';
    const override = deployment.baseUrl !== regionalEndpoint(region) ? deployment.baseUrl : undefined;
    const key = `${region} ${override ?? ''} ${deployment.timeoutMs}`;
    let client = this.#clients.get(key);
    if (!client) {
      client = new BedrockRuntimeClient({
        region,
        ...(override ? { endpoint: override } : {}),
        maxAttempts: 1,
        requestHandler: new NodeHttpHandler({
          connectionTimeout: CONNECT_TIMEOUT_MS,
          requestTimeout: deployment.timeoutMs,
          httpAgent: new HttpAgent({ keepAlive: true, maxSockets: SOCKETS_PER_CLIENT }),
          httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: SOCKETS_PER_CLIENT }),
        }),
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  /**
   * Removes the client's credentials from a text (an error message that echoes them back).
   * Resolving them again is cheap: the SDK caches them until they expire.
   */
  async redactor(client: BedrockRuntimeClient): Promise<(text: string) => string> {
    let secrets: string[] = [];
    try {
      const identity = await client.config.credentials();
      secrets = [identity.secretAccessKey, identity.sessionToken, identity.accessKeyId].filter((s): s is string => typeof s === 'string' && s.length >= 8);
    } catch {
      // No credentials resolved: there is nothing of them to echo.
    }
    return (text) => secrets.reduce((t, secret) => t.split(secret).join(REDACTED), text);
  }

  close(): void {
    for (const client of this.#clients.values()) client.destroy();
    this.#clients.clear();
  }
}
