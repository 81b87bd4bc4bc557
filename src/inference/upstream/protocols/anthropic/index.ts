/**
 * The `anthropic` upstream protocol: the Messages API (`POST {base_url}/messages`), for
 * Anthropic itself (`provider: anthropic`, base URL https://api.anthropic.com/v1) and for
 * engines that serve Messages natively (vLLM, llama.cpp server, Ollama: their `/v1` base
 * URL). Every call carries `x-api-key` (or `Authorization: Bearer` with `auth: bearer`),
 * `anthropic-version` and the deployment's `anthropic-beta` flags.
 *
 * A chat call is translated both ways: the request (map-request.ts, sampling.ts; what
 * Messages cannot carry is refused or dropped, unsupported.ts), the answer and its stream
 * (map-response.ts, stream.ts) into the OpenAI-shaped answer every wire reads, the errors
 * (errors.ts). When the inbound wire is Messages too, what its client sent survives
 * through typed fields of the one chat call, not an opaque body (so a fallback to another
 * protocol still translates): the caller's `anthropic-beta` values (`CallContext.betas`,
 * merged after the deployment's), the system prompt's `cache_control`
 * (`ChatMessage.cachedBlocks`), the `thinking` setting (`ChatParams.thinking`), and the provider's signed thinking and redacted_thinking
 * blocks (`ChatMessage.thinking` on the way in; `thinking_blocks` beside the answer's
 * reasoning on the way out, map-response.ts and stream.ts), byte for byte.
 */
import type { ChatOutput, ChatParams, ChatStreamEvent } from '../../../../domain/models/inference-backend.port.js';
import type { Deployment, ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { UpstreamTarget } from '../../http-client.js';
import type { ProbeTarget, UpstreamAttempt, UpstreamProtocol, UpstreamProtocolDeps, UpstreamProtocolEntry } from '../../protocol.js';
import { UsageCounter } from '../../usage-count.js';
import { UpstreamClient } from '../../http-client.js';
import { headerValue, upstreamProtocolError } from '../../errors.js';
import { targetOf, upstreamName } from '../../endpoint.js';
import { anthropicHttpError } from './errors.js';
import { messagesBody } from './map-request.js';
import { readMessage } from './map-response.js';
import { messagesStreamEvents } from './stream.js';
import { probeMessagesEngine } from './probe.js';
import { checkModelsList } from '../../models-check.js';

/** The API version every call names (the Messages API's only one). */
export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicHeaders(deployment: Deployment): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  if (deployment.apiKey) {
    if (deployment.auth === 'bearer') headers.authorization = `Bearer ${deployment.apiKey}`;
    else headers['x-api-key'] = deployment.apiKey;
  }
  if (deployment.betas && deployment.betas.length > 0) headers['anthropic-beta'] = deployment.betas.join(',');
  return headers;
}

const ENDPOINT = { headers: anthropicHeaders };

/** The deployment's target, its `anthropic-beta` joined by the caller's values (the deployment's first, none twice). */
function targetWithBetas(model: ModelSpec, deployment: Deployment, betas: readonly string[] | undefined): UpstreamTarget {
  const target = targetOf(model, deployment, ENDPOINT);
  if (!betas || betas.length === 0) return target;
  const merged = [...new Set([...(deployment.betas ?? []), ...betas])];
  return { ...target, headers: { ...target.headers, 'anthropic-beta': merged.join(',') } };
}

/** Who the refusal of an unsupported field names: the hosted provider, else the deployment. */
const providerOf = (deployment: Deployment): string => deployment.provider ?? `anthropic (deployment ${deployment.id})`;

export class AnthropicProtocol implements UpstreamProtocol {
  readonly #client = new UpstreamClient(anthropicHttpError);
  readonly #usage: UsageCounter;

  constructor(deps: UpstreamProtocolDeps) {
    this.#usage = new UsageCounter(deps.tokens, deps.logger);
  }

  async chat(params: ChatParams, { model, deployment }: UpstreamAttempt): Promise<ChatOutput> {
    const body = messagesBody(params, model, upstreamName(model, deployment), providerOf(deployment), false);
    const answer = await this.#client.postJson<unknown>(targetWithBetas(model, deployment, params.betas), '/messages', body, params);
    const message = readMessage(answer.body);
    if (!message) throw upstreamProtocolError(model.id, 'the answer has no content');
    return {
      content: message.content,
      reasoning: message.reasoning,
      finishReason: message.finishReason,
      usage: message.usage ?? (await this.#usage.chat(params, model, message.content + (message.reasoning ?? ''))),
      upstreamRequestId: headerValue(answer.headers['request-id']) ?? null,
      carried: message.carried,
    };
  }

  chatStream(params: ChatParams, { model, deployment }: UpstreamAttempt): AsyncGenerator<ChatStreamEvent> {
    // Mapped before the stream opens: a refused field is the caller's 400, not a failed attempt.
    const body = messagesBody(params, model, upstreamName(model, deployment), providerOf(deployment), true);
    return messagesStreamEvents(this.#client, params, model, {
      target: targetWithBetas(model, deployment, params.betas),
      path: '/messages',
      body,
      count: (produced) => this.#usage.chat(params, model, produced),
    });
  }

  /**
   * `sluice providers check`: the models list (`GET {base_url}/models`) with the
   * deployment's headers: the key and the version accepted. The model is not looked up in
   * it: Anthropic lists dated ids only, and its aliases (`claude-sonnet-4-5`) work.
   */
  check({ deployment }: UpstreamAttempt): Promise<string | null> {
    return checkModelsList({
      url: `${deployment.baseUrl}/models`,
      headers: anthropicHeaders(deployment),
      wanted: null,
      notFoundHint: 'check that it ends in /v1',
    });
  }

  probe(target: ProbeTarget): Promise<string | null> {
    return probeMessagesEngine(target);
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}

export const anthropicProtocol: UpstreamProtocolEntry = { name: 'anthropic', create: (deps) => new AnthropicProtocol(deps) };
