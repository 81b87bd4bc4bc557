/**
 * The route of an inbound wire format (src/wire/wire-format.ts): `POST <path>` validated
 * by its body's shared validator, answered with its call's JSON, or, when the body asks
 * for a stream, with its events as server-sent events in its framing. Its error format
 * goes on the route config (`wireErrors`); its answer and stream event into the OpenAPI
 * document. One module for every format: a format is served by being in the list.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler } from 'fastify';
import type { WireCallContext, WireFormat, WireHeaders, WireServices } from '../../../wire/wire-format.js';
import { agentSessionOf } from '../../agent-session.js';
import { labelCall } from '../../call-labels.js';
import { betasOf } from '../../anthropic-betas.js';
import { v1PathOf } from '../../../wire/wire-format.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { callerOf } from '../../auth/caller-auth.js';
import { bindRoutes, type BoundRoutes } from '../../route-module.js';
import { STREAM_DESCRIPTION, STREAM_EVENT } from '../../openapi-document.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { clientAbortSignal, sendSse } from '../../sse.js';
import { openCallStory, scopeOfPrefix, storyAnswered, storyFailedOrRefused, submitAbandoned, submitStory, tapStory, wireNameOf } from '../../call-story.js';
import type { RequestLogSink } from '../../../domain/request-log/request-log.port.js';

export interface WireRouteDeps {
  format: WireFormat;
  services: WireServices;
  /** Where each call's story goes (read per call: the request-log feature binds it after the core). */
  log: { readonly value: RequestLogSink };
}

function schemaOf(format: WireFormat) {
  return {
    tags: ['inference'],
    summary: format.summary,
    body: format.body,
    response: { 200: format.response },
    // Documented only: a stream is written by sendSse, not serialized from this schema.
    ...(format.stream ? { [STREAM_EVENT]: format.stream.event, [STREAM_DESCRIPTION]: format.stream.description } : {}),
  };
}

/** The wire's own names for the request id and the house's headers, on every answer of its route (errors and streams included). */
function wireHeadersHook(headers: WireHeaders): onSendHookHandler {
  const renamed = Object.entries(headers.renamed ?? {});
  return (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    if (headers.requestId) reply.header(headers.requestId, request.id);
    for (const [house, wire] of renamed) {
      const value = reply.getHeader(house);
      if (value !== undefined) reply.header(wire, value);
    }
    done(null, payload);
  };
}

/** One log line per call that sent any of the headers the wire records (`anthropic-beta`, `anthropic-version`). */
function recordedHeadersHook(recorded: Readonly<Record<string, string>>): onResponseHookHandler {
  const fields = Object.entries(recorded);
  return (request, reply, done) => {
    const line: Record<string, unknown> = { reqId: request.id };
    let any = false;
    for (const [field, header] of fields) {
      const value = request.headers[header];
      if (value === undefined) continue;
      line[field] = value;
      any = true;
    }
    if (any) request.log.info({ ...line, status: reply.statusCode }, 'wire headers');
    done();
  };
}

export function registerWireRoute(scope: FastifyInstance, { format, services, log }: WireRouteDeps): void {
  const { stream } = format;
  // The usage records name the format's /v1 path on every scope that mounts it.
  const route = v1PathOf(format);
  const named = stream?.framing === 'named';
  const where = { route, wire: wireNameOf(format.path), scope: scopeOfPrefix(scope.prefix) };
  const options = {
    schema: schemaOf(format),
    validatorCompiler: wireValidatorCompiler,
    ...(format.serializedBySchema ? {} : serializeAsBefore),
    ...(format.errors ? { config: { wireErrors: format.errors } } : {}),
    ...(format.headers ? { onSend: wireHeadersHook(format.headers) } : {}),
    onError: storyFailedOrRefused(log, where),
    onResponse: format.headers?.recorded ? [recordedHeadersHook(format.headers.recorded), submitStory(log.value)] : submitStory(log.value),
  };
  scope.post(format.path, options, async (request, reply) => {
    const caller = callerOf(request);
    const signal = clientAbortSignal(reply);
    const streams = stream?.requested(request.body) === true;
    const story = openCallStory(log.value, where, { id: request.id, request, caller, body: request.body, stream: streams });
    request.callStory = story;
    const context: WireCallContext = { requestId: request.id, signal, route, story };
    const sessionId = agentSessionOf(request);
    if (sessionId !== undefined) context.sessionId = sessionId;
    labelCall(context, request, format, request.body, caller.principal);
    story.labelled(context.tags, context.endUser);
    const betas = betasOf(request.headers['anthropic-beta']);
    if (betas.length > 0) context.betas = betas;
    if (streams) return sendSse(reply, tapStory(story, stream!.open(services, caller, request.body, context)), signal, { named });
    try {
      return storyAnswered(story, await format.run(services, caller, request.body, context));
    } finally {
      // A client that leaves before the answer is sent gets no response, so onResponse never runs: the call is logged here.
      if (signal.aborted) submitAbandoned(log.value, story);
      else reply.raw.once('close', () => reply.raw.writableFinished || submitAbandoned(log.value, story));
    }
  });
}

/** A format's route bound to its services, with the format it serves (what a scope reads of it, e.g. the gateway's usage event). */
export interface BoundWireRoute {
  format: WireFormat;
  routes: BoundRoutes;
}

export const bindWireRoute = (format: WireFormat, services: WireServices, log: WireRouteDeps['log']): BoundWireRoute => ({
  format,
  routes: bindRoutes(registerWireRoute, { format, services, log }),
});
