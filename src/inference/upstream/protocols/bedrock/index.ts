/**
 * The `bedrock` upstream protocol: Amazon Bedrock's Converse and ConverseStream APIs
 * through the AWS SDK (credentials from the AWS default chain, the region per
 * deployment, an optional endpoint override as the deployment's `base_url`). One attempt
 * on one deployment: the request mapped to Converse (map-request.ts), the answer or its
 * event stream mapped back in OpenAI's choice shape (map-response.ts), Bedrock's
 * exceptions as AppErrors (errors.ts). Chat only: a model bound to it is refused on
 * every other capability. A model that reports no usage is counted with its tokenizer.
 */
import { ConverseCommand, ConverseStreamCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { ChatOutput, ChatParams, ChatStreamEvent } from '../../../../domain/models/inference-backend.port.js';
import type { Deployment, ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { UpstreamAttempt, UpstreamProtocol, UpstreamProtocolDeps, UpstreamProtocolEntry } from '../../protocol.js';
import { upstreamProtocolError } from '../../errors.js';
import { UsageCounter } from '../../usage-count.js';
import { BedrockClients } from './client.js';
import { checkDeployment } from './check.js';
import { bedrockError } from './errors.js';
import { converseRequest } from './map-request.js';
import { ConverseStreamReader, readConverse } from './map-response.js';

/** The model id Bedrock is asked for: the deployment's `upstream_model`, else the model's id. */
const bedrockModelId = (model: ModelSpec, deployment: Deployment): string => deployment.upstreamModel ?? model.id;

export class BedrockProtocol implements UpstreamProtocol {
  readonly #clients = new BedrockClients();
  readonly #usage: UsageCounter;

  constructor(deps: UpstreamProtocolDeps) {
    this.#usage = new UsageCounter(deps.tokens, deps.logger);
  }

  async chat(params: ChatParams, { model, deployment }: UpstreamAttempt): Promise<ChatOutput> {
    const input = converseRequest(params, model, bedrockModelId(model, deployment));
    const client = this.#clients.for(deployment);
    let response;
    try {
      response = await client.send(new ConverseCommand(input), { abortSignal: params.signal });
    } catch (err) {
      throw await this.#failure(err, client, params, model, deployment);
    }
    const answer = readConverse(response);
    if (!answer) throw upstreamProtocolError(model.id, 'the answer has no message');
    const usage = answer.usage ?? (await this.#usage.chat(params, model, answer.content + (answer.reasoning ?? '')));
    return { ...answer, usage, upstreamRequestId: response.$metadata.requestId ?? null };
  }

  async *chatStream(params: ChatParams, { model, deployment }: UpstreamAttempt): AsyncGenerator<ChatStreamEvent> {
    const input = converseRequest(params, model, bedrockModelId(model, deployment));
    const client = this.#clients.for(deployment);
    const reader = new ConverseStreamReader();
    let produced = '';
    try {
      const response = await client.send(new ConverseStreamCommand(input), { abortSignal: params.signal });
      if (!response.stream) throw upstreamProtocolError(model.id, 'the answer has no event stream');
      for await (const event of response.stream) {
        for (const e of reader.read(event)) {
          if (e.type === 'chunk') produced += e.text;
          yield e;
        }
      }
    } catch (err) {
      throw await this.#failure(err, client, params, model, deployment);
    }
    if (!reader.finished) throw upstreamProtocolError(model.id, 'the stream ended before the answer finished');
    yield { type: 'usage', usage: reader.usage ?? (await this.#usage.chat(params, model, produced)) };
  }

  check(at: UpstreamAttempt): Promise<string | null> {
    const client = this.#clients.for(at.deployment);
    return checkDeployment(client, bedrockModelId(at.model, at.deployment), at, () => this.#clients.redactor(client));
  }

  async close(): Promise<void> {
    this.#clients.close();
  }

  async #failure(err: unknown, client: BedrockRuntimeClient, params: ChatParams, model: ModelSpec, deployment: Deployment) {
    const redact = await this.#clients.redactor(client);
    return bedrockError(err, { modelId: model.id, upstreamModel: bedrockModelId(model, deployment), region: deployment.region ?? '', signal: params.signal, redact });
  }
}

export const bedrockProtocol: UpstreamProtocolEntry = { name: 'bedrock', create: (deps) => new BedrockProtocol(deps) };
