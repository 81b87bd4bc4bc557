/**
 * POST /v1/embeddings: one vector per input, in input order. Models that truncate
 * (the catalog's `truncatesInput`) embed over-long inputs cut at their limit; others
 * refuse them. Vectors go out as JSON numbers (float32 values in their shortest exact
 * form, float32.ts) or, with `encoding_format: base64`, as little-endian float32 bytes.
 */
import type { Caller } from '../identity/caller.js';
import { runAdmitted } from '../billing/meter.js';
import { invalidRequest } from '../shared/errors.js';
import type { CallContext } from '../models/inference-backend.port.js';
import type { InferenceServiceDeps } from './chat-call.js';
import { assertWithinContext } from './chat-runner.js';
import { admitOnCountedInput, askedBy, labelled, meteredCallOf } from './metered-call.js';
import { float32Base64, vectorNumbers } from './float32.js';
import { ServedListener } from './served-call.js';

export const EMBEDDINGS_ROUTE = '/v1/embeddings';

interface EmbeddingsRequest {
  model: string;
  inputs: string[];
  /** True when `input` was an array (param names then carry the index). */
  listed: boolean;
  encoding: 'float' | 'base64';
  dimensions: number | undefined;
}

/** An embeddings request as the domain takes it: the fields of a validated body it reads (src/wire/embeddings/body.ts). */
export interface EmbeddingsRequestIn {
  model: string;
  input: string | string[];
  encoding_format?: 'float' | 'base64' | null;
  dimensions?: number | null;
}

function embeddingsRequestOf(body: EmbeddingsRequestIn): EmbeddingsRequest {
  const listed = Array.isArray(body.input);
  return {
    model: body.model,
    inputs: typeof body.input === 'string' ? [body.input] : body.input,
    listed,
    encoding: body.encoding_format ?? 'float',
    dimensions: body.dimensions ?? undefined,
  };
}

export class EmbeddingsService {
  constructor(private readonly deps: InferenceServiceDeps) {}

  async create(caller: Caller, body: EmbeddingsRequestIn, context: CallContext & { route?: string }): Promise<Record<string, unknown>> {
    const request = embeddingsRequestOf(body);
    const { registry } = this.deps;
    const model = registry.require(request.model, 'embeddings');
    const native = model.entry.embeddingDimensions;
    if (request.dimensions !== undefined && native !== undefined && request.dimensions !== native) {
      throw invalidRequest(`dimensions must be ${native} for model ${model.id}; it cannot shorten its vectors`, 'dimensions');
    }
    if (!model.entry.truncatesInput) {
      for (const [i, text] of request.inputs.entries()) {
        await assertWithinContext(registry, model, text, request.listed ? `input[${i}]` : 'input');
      }
    }
    const backend = await registry.backendFor(model, 'embed');
    const metered = labelled(askedBy(meteredCallOf(model, context.route ?? EMBEDDINGS_ROUTE, context.requestId, request.inputs, 0), request.model), context);
    const admission = await admitOnCountedInput(caller, registry, model, metered, request.inputs);
    const served = new ServedListener();
    const output = await runAdmitted(caller, admission, async () => {
      const value = await backend.embed!({ requestId: context.requestId, signal: context.signal, model, inputs: request.inputs, onServed: served.listen, story: context.story });
      served.announce(caller, model.id);
      return { value, usage: served.usage({ inputTokens: value.usage.inputTokens, outputTokens: 0, status: 200 }) };
    });
    const vectors: readonly (Float32Array | number[])[] = output.vectors;
    const data = vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: request.encoding === 'base64' ? float32Base64(vector) : vectorNumbers(vector),
    }));
    return {
      object: 'list',
      data,
      model: registry.isAlias(request.model) ? request.model : served.served?.fallback ? served.served.model : (model.entry.responseModel ?? model.id),
      usage: { prompt_tokens: output.usage.inputTokens, total_tokens: output.usage.inputTokens },
    };
  }
}
