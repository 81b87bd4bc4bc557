/**
 * Reading one upstream's streamed answer: its Server-Sent Events as the port's stream
 * events (chunks as they arrive, then the usage, counted when the engine reports none),
 * and an error event or a cut stream as the upstream's fault.
 */
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { CallContext, ChatStreamEvent, TokenUsage } from '../../../../domain/models/inference-backend.port.js';
import type { UpstreamClient, UpstreamTarget } from '../../http-client.js';
import { redactSecret, upstreamProtocolError, upstreamTransportError } from '../../errors.js';
import { finishesAChoice, readStreamChunk } from './map-response.js';
import { SseDecoder } from '../../sse-decoder.js';

/** One streamed call on one deployment: where it goes, what it sends, how its usage is counted when the engine reports none. */
export interface StreamRequest {
  target: UpstreamTarget;
  path: string;
  body: Record<string, unknown>;
  count: (produced: string) => Promise<TokenUsage>;
}

/** An upstream's SSE stream as port events, ending with its usage (counted when it reports none). */
export async function* upstreamStreamEvents(
  client: UpstreamClient,
  params: CallContext,
  model: ModelSpec,
  request: StreamRequest,
): AsyncGenerator<ChatStreamEvent> {
  const response = await client.post(request.target, request.path, request.body, params, 'text/event-stream');
  const decoder = new SseDecoder();
  let usage: TokenUsage | null = null;
  let finished = false;
  let done = false;
  let produced = '';
  try {
    // Read to the natural end even after [DONE], so the keep-alive socket can be reused.
    for await (const bytes of response.body) {
      for (const event of decoder.push(bytes as Buffer)) {
        if (done) continue;
        if (event.data === '[DONE]') {
          done = true;
          continue;
        }
        for (const e of parseStreamEvent(model.id, event.event, event.data, request.target.secret)) {
          if (e.type === 'usage') usage = e.usage;
          else if (e.type === 'chunk') {
            finished ||= finishesAChoice(e);
            produced += e.text;
            yield e;
          }
        }
      }
    }
  } catch (err) {
    throw upstreamTransportError(model.id, err, params.signal);
  } finally {
    if (!response.body.readableEnded) response.body.destroy();
  }
  if (!finished && !done) throw upstreamProtocolError(model.id, 'the stream ended before the answer finished');
  yield { type: 'usage', usage: usage ?? (await request.count(produced)) };
}

/** One event's data as port events; an `error` event (or an `error` field) is the upstream's refusal. */
function parseStreamEvent(modelId: string, type: string | null, data: string, secret: string | null): ChatStreamEvent[] {
  let chunk: Record<string, unknown>;
  try {
    chunk = JSON.parse(data) as Record<string, unknown>;
  } catch {
    throw upstreamProtocolError(modelId, 'a stream event is not JSON');
  }
  if (type === 'error' || (chunk.error !== undefined && chunk.error !== null)) {
    const error = chunk.error as { message?: unknown } | string | undefined;
    const message = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : 'error event';
    throw upstreamProtocolError(modelId, redactSecret(message, secret));
  }
  return readStreamChunk(chunk);
}
