/**
 * What an inbound wire format is, as one descriptor (src/wire/<format>/index.ts): the
 * path it is served on, its request body, its answer and stream event for the OpenAPI
 * document, the call that answers it, how its stream is framed and which event carries
 * the call's usage, whether a batch may name it, and its error format. The formats are
 * listed once (formats.ts); the `/v1` routes, the gateway, the batch runner and the
 * OpenAPI document all read that list. A descriptor knows no web framework: src/http
 * turns one into a route (routes/v1/wire-route.ts).
 *
 * The services a wire calls (`WireServices`) are declared here by the calls the wires
 * make, not imported: src/wire imports only the domain's record types and shared kernel
 * (lint zones), and the domain's services fit these shapes. The caller is the domain's
 * `Caller`, passed through untouched.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ModelSpec } from '../domain/models/model-spec.types.js';
import type { CallStory } from '../domain/request-log/call-story.js';
import type { WireErrorFormat } from './error-format.js';
import type { ChatCompletionRequestBody } from './chat-completions/body.js';
import type { CompletionRequestBody } from './completions/body.js';
import type { EmbeddingsRequestBody } from './embeddings/body.js';
import type { ModerationsRequestBody } from './moderations/body.js';
import type { ResponsesRequest } from '../domain/responses/responses.types.js';
import type { ResponseSession } from '../domain/responses/response-session.js';
import type { CountTokensRequestBody, MessagesRequestBody } from './messages/body.js';

/** The domain's `Caller` (identity/caller.ts): who calls and who pays, handed from the route to the service. */
export type WireCaller = object;

export interface WireCallContext {
  requestId: string;
  /** Aborts when the client goes. */
  signal: AbortSignal;
  /** The usage records' route: the format's `/v1` path, or `batch` for a batch line. */
  route: string;
  /** The coding agent's session (Claude Code's `X-Claude-Code-Session-Id`), recorded on the usage record. */
  sessionId?: string;
  /** The call's tags (`x-sluice-tags`, the body's `metadata.tags`, the key's defaults), recorded on its usage and request log. */
  tags?: readonly string[];
  /** The end user the client named (OpenAI's `user`, Anthropic's `metadata.user_id`). */
  endUser?: string;
  /** The caller's `anthropic-beta` header values (an anthropic-protocol upstream adds them to its deployment's). */
  betas?: readonly string[];
  /** The call's story for the request log: the router tells it each attempt. */
  story?: CallStory;
  /** The connection's memory, on a socket (WireSocket): what a later request on it may continue. */
  session?: ResponseSession;
}

/** Events a stream writes, or their opening (the stream is handed over before its first event). */
export type WireEvents = AsyncIterable<object> | Promise<AsyncIterable<object>>;

/** A call answered with one JSON object. */
interface Answered<Body> {
  create(caller: WireCaller, body: Body, context: WireCallContext): Promise<object>;
}

/** The domain services the wires call, by name (the composition's inference services). */
export interface WireServices {
  chatCompletions: Answered<ChatCompletionRequestBody> & { openStream(caller: WireCaller, body: ChatCompletionRequestBody, context: WireCallContext): WireEvents };
  completions: Answered<CompletionRequestBody> & { openStream(caller: WireCaller, body: CompletionRequestBody, context: WireCallContext): WireEvents };
  /** On a route: with storing, continuations and background mode; on a batch line, the plain service. */
  responses: Answered<ResponsesRequest> & { open(caller: WireCaller, request: ResponsesRequest, context: WireCallContext): WireEvents };
  embeddings: Answered<EmbeddingsRequestBody>;
  moderations: Answered<ModerationsRequestBody>;
  messages: Answered<MessagesRequestBody> & {
    open(caller: WireCaller, body: MessagesRequestBody, context: WireCallContext): WireEvents;
    countTokens(caller: WireCaller, body: CountTokensRequestBody, context: WireCallContext): Promise<object>;
  };
}

/**
 * Headers a wire's answers carry beside the house's (every answer of its route, errors
 * included): the request id under the wire's own name, and house headers repeated under
 * the wire's names (Anthropic's `anthropic-ratelimit-requests-limit` for
 * `x-ratelimit-limit-requests`).
 */
export interface WireHeaders {
  requestId?: string;
  /** House header → the wire's name for it. */
  renamed?: Readonly<Record<string, string>>;
  /** Request headers recorded on one log line per call, when sent: log field → header (Anthropic's `anthropic-beta`). */
  recorded?: Readonly<Record<string, string>>;
}

/**
 * How a stream's events are written as server-sent events: `done`, one `data:` line per
 * event and `data: [DONE]` at the end (chat, legacy completions); `named`, each event
 * under its `type` as the event name and no `[DONE]` (Responses).
 */
export type WireFraming = 'done' | 'named';

export interface WireStream<Body> {
  /** Whether this body asks for a stream (OpenAI's wires: `stream: true`). */
  requested(body: Body): boolean;
  open(services: WireServices, caller: WireCaller, body: Body, context: WireCallContext): WireEvents;
  framing: WireFraming;
  /** The event the OpenAPI document shows, and how the stream is written, in words. */
  event: TSchema;
  description: string;
  /** Whether this event reports the call's usage (where the gateway adds its `gw_usage`). */
  carriesUsage(event: Record<string, unknown>): boolean;
}

/**
 * A format's WebSocket mode (the Responses API's): on its path, a WebSocket upgrade opens a
 * connection whose client events each ask for one answer, whose events come back as JSON
 * text messages, one answer at a time (src/http/socket/).
 */
export interface WireSocket<Body> {
  /** The client event that asks for an answer (`response.create`); any other type is refused. */
  createEvent: string;
  /** The event's own fields, taken off before the rest is validated as the body (its `type`, `generate`, …). */
  envelope: readonly string[];
  /** Opens the answer of a validated body with the event's own fields: a refusal is thrown (an AppError). */
  open(services: WireServices, caller: WireCaller, body: Body, envelope: Readonly<Record<string, unknown>>, context: WireCallContext): WireEvents;
}

/**
 * A descriptor is typed by its own body; a list holds formats of different bodies as
 * `WireFormat` (its calls are methods, whose parameters TypeScript compares both ways).
 */
export interface WireFormat<Body = unknown> {
  /** Under the API's prefix: `/chat/completions` is served on `/v1/chat/completions` (and `/gateway/v1/…`). */
  path: string;
  /** The OpenAPI summary. */
  summary: string;
  /** The one TypeBox definition of the request body: it validates the route and every batch line. */
  body: TSchema;
  /** The JSON answer's schema. */
  response: TSchema;
  /**
   * The answer is written by the response schema's compiled serializer (faster, and drops
   * what the schema does not list), rather than by JSON.stringify with the schema documenting it.
   */
  serializedBySchema: boolean;
  run(services: WireServices, caller: WireCaller, body: Body, context: WireCallContext): Promise<object>;
  /** Absent: the format never streams. */
  stream?: WireStream<Body>;
  /** Absent: its path takes no WebSocket. Served on `/v1` only. */
  socket?: WireSocket<Body>;
  /** Whether the signed gateway (`/gateway/v1`) serves it too. */
  gateway: boolean;
  /** Absent: a batch may not name it. Given: whether a model (that runs here) serves its batch lines. */
  batch?: { serves(model: ModelSpec): boolean };
  /** Its error envelope and stream error frame; absent, OpenAI's. */
  errors?: WireErrorFormat;
  /** Headers its answers carry under its own names; absent, the house's only. */
  headers?: WireHeaders;
  /** The tags and end user its body names (checked: a bad value is a 400 naming its field); absent, none. */
  labels?(body: Body): BodyLabels;
}

/** What a body names of its call's labels: tags (`metadata.tags`) and the end user (`user`, `metadata.user_id`). */
export interface BodyLabels {
  tags?: readonly string[];
  endUser?: string;
}

/** The `/v1` path of a format: its batch endpoint's url, and the route its usage records name on every scope. */
export const v1PathOf = (format: Pick<WireFormat, 'path'>): string => `/v1${format.path}`;

/** OpenAI's convention: a body streams when it says `stream: true`. */
export const streamsWhenAsked = (body: { stream?: boolean | null }): boolean => body.stream === true;

/** A chunk with a `usage` object: the last one of OpenAI's chunk streams, when the caller asked for usage (`stream_options.include_usage`). */
export const carriesUsageObject = (event: Record<string, unknown>): boolean => typeof event.usage === 'object' && event.usage !== null;
