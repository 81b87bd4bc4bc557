/**
 * `sluice providers check` for one bedrock deployment: a one-token Converse call (Bedrock
 * has no cheaper call that proves both the credentials and the model), its failure said
 * in words. Throttling counts as a pass: the credentials and the model were accepted.
 */
import { ConverseCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { UpstreamAttempt } from '../../protocol.js';
import { bedrockError } from './errors.js';

const CHECK_TIMEOUT_MS = 10_000;

export async function checkDeployment(client: BedrockRuntimeClient, modelId: string, at: UpstreamAttempt, redact: () => Promise<(text: string) => string>): Promise<string | null> {
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    const command = new ConverseCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'ping' }] }], inferenceConfig: { maxTokens: 1 } });
    await client.send(command, { abortSignal: signal });
    return null;
  } catch (err) {
    const name = (err as { name?: unknown }).name;
    if (name === 'CredentialsProviderError') return 'no AWS credentials found (environment, shared config or SSO, web identity, container or instance role)';
    if (signal.aborted) return `no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
    const failure = bedrockError(err, { modelId: at.model.id, upstreamModel: modelId, region: at.deployment.region ?? '', signal, redact: await redact() });
    if (failure.kind === 'rate_limit') return null;
    if (failure.upstreamStatus === 403) return `bad credentials: ${failure.message}`;
    if (failure.upstreamStatus === 404) return `unknown model: ${failure.message}`;
    if (failure.upstreamStatus === undefined && failure.retryable) return `unreachable: ${failure.message}`;
    return failure.message;
  }
}
