/**
 * A streamed Messages answer (https://docs.anthropic.com/en/api/messages-streaming) → the
 * port's stream events, each an OpenAI-shaped chunk every wire reads: `text_delta` →
 * `content`, `thinking_delta` → `reasoning_content`, a `tool_use` block's start and its
 * `input_json_delta`s → `tool_calls` deltas (one index per tool block), `message_delta`'s
 * stop reason → the finish reason. Usage comes from `message_start` (input, cache reads
 * and writes) and `message_delta` (output, cumulative). `ping` and signature deltas say
 * nothing to a translated answer. An `error` event, or a stream cut before
 * `message_stop` (Anthropic's truncation), is the upstream's fault, never a short answer.
 */
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { CallContext, ChatStreamEvent, TokenUsage } from '../../../../domain/models/inference-backend.port.js';
import { AppError } from '../../../../domain/shared/errors.js';
import type { UpstreamClient, UpstreamTarget } from '../../http-client.js';
import { redactSecret, upstreamProtocolError, upstreamTransportError } from '../../errors.js';
import { SseDecoder } from '../../sse-decoder.js';
import { finishReasonOf, readUsage } from './map-response.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);

/** One chunk of choice 0, as an OpenAI engine streams it. */
const chunk = (delta: Json, text: string, finishReason: string | null = null): ChatStreamEvent => ({
  type: 'chunk',
  carried: { choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], fields: {} },
  text,
});

/** What the events so far said: tool blocks' indexes, the usage, whether the message ended. */
class MessageState {
  readonly toolIndexes = new Map<number, number>();
  usage: Json = {};
  stopped = false;

  /** Later usage reports are cumulative: their fields replace the earlier ones. */
  addUsage(raw: unknown): void {
    const usage = obj(raw);
    if (usage) for (const [k, v] of Object.entries(usage)) if (typeof v === 'number') this.usage[k] = v;
  }
}

function streamError(modelId: string, data: Json, secret: string | null): AppError {
  const error = obj(data.error);
  const type = typeof error?.type === 'string' ? error.type : 'error';
  const message = typeof error?.message === 'string' ? redactSecret(error.message.slice(0, 500), secret) : 'error event';
  if (type === 'overloaded_error' || type === 'api_error') {
    return new AppError('upstream', `Upstream for model ${modelId} failed mid-stream (${type}: ${message})`, { code: 'upstream_error', retryable: true });
  }
  return upstreamProtocolError(modelId, `${type}: ${message}`);
}

/** One event → the chunks it makes (none for most). */
function eventChunks(modelId: string, type: string | null, data: Json, state: MessageState, secret: string | null): ChatStreamEvent[] {
  switch (type ?? data.type) {
    case 'message_start':
      state.addUsage(obj(data.message)?.usage);
      return [];
    case 'content_block_start': {
      const block = obj(data.content_block);
      if (block?.type === 'tool_use') {
        const index = state.toolIndexes.size;
        state.toolIndexes.set(data.index as number, index);
        return [chunk({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] }, '')];
      }
      return typeof block?.text === 'string' && block.text !== '' ? [chunk({ content: block.text }, block.text)] : [];
    }
    case 'content_block_delta': {
      const delta = obj(data.delta);
      if (delta?.type === 'text_delta' && typeof delta.text === 'string') return [chunk({ content: delta.text }, delta.text)];
      if (delta?.type === 'thinking_delta' && typeof delta.thinking === 'string') return [chunk({ reasoning_content: delta.thinking }, delta.thinking)];
      if (delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
        const index = state.toolIndexes.get(data.index as number) ?? 0;
        return [chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] }, delta.partial_json)];
      }
      return [];
    }
    case 'message_delta': {
      state.addUsage(data.usage);
      const stop = obj(data.delta)?.stop_reason;
      return typeof stop === 'string' ? [chunk(stop === 'refusal' ? { refusal: 'The provider declined to answer.' } : {}, '', finishReasonOf(stop))] : [];
    }
    case 'message_stop':
      state.stopped = true;
      return [];
    case 'error':
      throw streamError(modelId, data, secret);
    default:
      return [];
  }
}

export interface MessagesStream {
  target: UpstreamTarget;
  path: string;
  body: Json;
  count: (produced: string) => Promise<TokenUsage>;
}

export async function* messagesStreamEvents(client: UpstreamClient, params: CallContext, model: ModelSpec, request: MessagesStream): AsyncGenerator<ChatStreamEvent> {
  const response = await client.post(request.target, request.path, request.body, params, 'text/event-stream');
  const decoder = new SseDecoder();
  const state = new MessageState();
  let produced = '';
  try {
    for await (const bytes of response.body) {
      for (const event of decoder.push(bytes as Buffer)) {
        if (state.stopped) continue;
        let data: Json;
        try {
          data = JSON.parse(event.data) as Json;
        } catch {
          throw upstreamProtocolError(model.id, 'a stream event is not JSON');
        }
        for (const e of eventChunks(model.id, event.event, data, state, request.target.secret)) {
          if (e.type === 'chunk') produced += e.text;
          yield e;
        }
      }
    }
  } catch (err) {
    throw upstreamTransportError(model.id, err, params.signal);
  } finally {
    if (!response.body.readableEnded) response.body.destroy();
  }
  if (!state.stopped) throw upstreamProtocolError(model.id, 'the stream ended before message_stop');
  yield { type: 'usage', usage: readUsage(state.usage) ?? (await request.count(produced)) };
}
