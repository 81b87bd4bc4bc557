/**
 * POST /v1/responses: the same model path as chat completions (ChatRunner), answered as
 * a Responses object. A reasoning item comes first when the model returned reasoning.
 */
import type { Caller } from '../identity/caller.js';
import { meteredCall } from '../billing/meter.js';
import { toUnixSeconds } from '../shared/clock.js';
import { randomString } from '../shared/ids.js';
import type { CallContext } from '../models/inference-backend.port.js';
import type { InferenceServiceDeps } from './chat-completions.service.js';
import { ChatRunner, withOutputCap, type ChatResult } from './chat-runner.js';
import { CONVERSATION_FRAMING_TOKENS, meteredCallOf, outputCapOf } from './metered-call.js';
import { ServedListener } from './served-call.js';
import type { ResponsesRequestBody } from '../../wire/responses.js';
import { responsesRequestOf, type ResponsesRequest } from './responses-request.js';

export const RESPONSES_ROUTE = '/v1/responses';

const hexId = (prefix: string): string => `${prefix}${randomString(24, 'hex')}`;

function outputItems(result: ChatResult, status: string): unknown[] {
  const items: unknown[] = [];
  if (result.reasoning !== null) {
    items.push({ id: hexId('rs_'), type: 'reasoning', content: [{ type: 'reasoning_text', text: result.reasoning }], summary: [] });
  }
  items.push({
    type: 'message',
    id: hexId('msg_'),
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text: result.content, annotations: [] }],
  });
  return items;
}

/** `outputCap`: the cap the call ran with, when the meter lowered it (a request that set none). */
export function responseWire(
  request: ResponsesRequest,
  model: string,
  result: ChatResult,
  createdAt: number,
  completedAt: number,
  outputCap?: number,
): Record<string, unknown> {
  const incomplete = result.finishReason === 'length';
  const status = incomplete ? 'incomplete' : 'completed';
  const { usage } = result;
  return {
    id: hexId('resp_'),
    object: 'response',
    created_at: createdAt,
    status,
    completed_at: incomplete ? null : completedAt,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions,
    max_output_tokens: outputCap ?? request.maxOutputTokens,
    model,
    output: outputItems(result, status),
    parallel_tool_calls: request.parallelToolCalls,
    previous_response_id: null,
    reasoning: { effort: request.reasoningEffort, summary: null },
    store: request.store,
    temperature: request.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: request.topP ?? 1,
    truncation: request.truncation,
    usage: {
      input_tokens: usage.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.outputTokens,
      output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
    user: request.user,
    metadata: request.metadata,
  };
}

export class ResponsesService {
  readonly #runner: ChatRunner;

  constructor(private readonly deps: InferenceServiceDeps) {
    this.#runner = new ChatRunner(deps.registry);
  }

  async create(caller: Caller, body: ResponsesRequestBody, context: CallContext & { route?: string }): Promise<Record<string, unknown>> {
    const createdAt = toUnixSeconds(this.deps.clock.nowMs());
    const request = responsesRequestOf(body);
    const model = this.deps.registry.require(request.model, 'responses');
    const call = await this.#runner.prepare(
      model,
      {
        messages: request.messages,
        options: request.metadata,
        sampling: request.sampling,
        labels: request.labels,
        labelText: request.instructions ? { text: request.instructions, param: 'instructions' } : null,
        inputParam: 'input',
        truncation: request.truncation,
      },
      false,
    );
    const texts = call.kind === 'chat' ? call.messages.map((m) => m.content) : [call.input];
    const framing = call.kind === 'chat' ? CONVERSATION_FRAMING_TOKENS : 0;
    const metered = meteredCallOf(model, context.route ?? RESPONSES_ROUTE, context.requestId, texts, outputCapOf(model, request.sampling), framing);
    return meteredCall(caller, metered, async (admission) => {
      const served = new ServedListener();
      const result = await this.#runner.run(withOutputCap(call, admission.outputCap), served.context(context));
      served.announce(caller);
      const completedAt = toUnixSeconds(this.deps.clock.nowMs());
      const value = responseWire(request, served.modelOr(model.id), result, createdAt, completedAt, admission.outputCap);
      return { value, usage: served.usage({ inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, status: 200 }) };
    });
  }
}
