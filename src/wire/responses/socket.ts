/**
 * The Responses API's WebSocket mode (OpenAI's guide, "WebSocket mode"): each
 * `response.create` event is a Responses create body with `type` (and `generate`) beside
 * its fields, answered with the events a stream of that body would carry. `stream` is
 * implicit and not read; `background` is refused; `generate: false` warms up without
 * generating. OpenAI's `stream_id` lanes are not served: one response runs at a time.
 */
import { invalidRequest } from '../../domain/shared/errors.js';
import type { WireSocket } from '../wire-format.js';
import type { ResponsesRequestBody } from './body.js';
import { responsesRequestOf } from './mapper.js';

function generateOf(envelope: Readonly<Record<string, unknown>>): boolean {
  const { generate } = envelope;
  if (generate === undefined || generate === null) return true;
  if (typeof generate !== 'boolean') throw invalidRequest('generate must be a boolean', 'generate', 'invalid_type');
  return generate;
}

export const responsesSocket: WireSocket<ResponsesRequestBody> = {
  createEvent: 'response.create',
  envelope: ['type', 'generate', 'stream', 'stream_id'],
  open(services, caller, body, envelope, context) {
    if (envelope.stream_id !== undefined) {
      throw invalidRequest('stream_id is not supported: a WebSocket runs one response at a time; open another WebSocket to run responses side by side', 'stream_id', 'unsupported_parameter');
    }
    if (body.background === true) throw invalidRequest('background is not supported over WebSocket', 'background', 'unsupported_parameter');
    const generate = generateOf(envelope);
    return services.responses.open(caller, { ...responsesRequestOf(body), stream: true, generate }, context);
  },
};
