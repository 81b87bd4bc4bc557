/**
 * The AWS SDK's Bedrock runtime client, one per region, endpoint and timeout: SigV4
 * signing, the event-stream decoding of ConverseStream and the credential chain are the
 * SDK's (environment, shared config and SSO, web identity, container and instance roles),
 * not re-implemented here. The SDK's own retries are off: the router retries, on another
 * deployment when there is one, and counts the failures for cooldowns.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { Deployment } from '../../../../domain/models/model-spec.types.js';

/** Bedrock's own endpoint in a region (the config's default base_url of a bedrock deployment): the SDK resolves it itself. */
const regionalEndpoint = (region: string): string => `https://bedrock-runtime.${region}.amazonaws.com`;

const REDACTED = '[redacted]';

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
        requestHandler: { requestTimeout: deployment.timeoutMs },
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
