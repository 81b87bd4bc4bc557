/**
 * The request log's collector on the HTTP side: a call's story is opened by its route
 * (openCallStory), handed down on the Caller (the meter) and the call context (the
 * router), told when the answer's first byte and its tools go by (tapStory), and
 * submitted to the log when the response ends (its route's onResponse), with the error
 * code its onError saw.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CallStory } from '../domain/request-log/call-story.js';
import type { RequestLogSink } from '../domain/request-log/request-log.port.js';
import type { CallScope } from '../domain/request-log/request-log.types.js';
import { toolNamesOf } from '../domain/request-log/tool-names.js';
import type { Caller } from '../domain/identity/caller.js';
import { isAppError } from '../domain/shared/errors.js';
import { agentSessionOf } from './agent-session.js';
import { asAppError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The call's story, on routes that log calls; null elsewhere. */
    callStory: CallStory | null;
  }
}

/** Which scope a route's prefix belongs to. */
export function scopeOfPrefix(prefix: string): CallScope {
  if (prefix.startsWith('/gateway')) return 'gateway';
  if (prefix.startsWith('/storefront')) return 'storefront';
  if (prefix.startsWith('/mcp')) return 'mcp';
  return 'v1';
}

/** A wire's name from its path: `/chat/completions` → `chat-completions`. */
export const wireNameOf = (path: string): string => path.replace(/^\//, '').replaceAll('/', '-');

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'proxy-authorization', 'cookie'] as const;

/** The credentials the request came with: a redacted body never keeps them, wherever they appear. */
function credentialsOf(request: FastifyRequest): string[] {
  const found: string[] = [];
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers[name];
    if (typeof value !== 'string') continue;
    found.push(value);
    const space = value.indexOf(' ');
    if (space > 0) found.push(value.slice(space + 1));
  }
  return found;
}

export interface StoryRoute {
  route: string;
  wire: string;
  scope: CallScope;
}

type Body = { model?: unknown; stream?: unknown; prompt_cache_key?: unknown; user?: unknown; metadata?: unknown } | null;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined);

/** What a call's story opens with: who calls, on which route, with which body (a route's, or a socket event's). */
export interface StoryStart {
  id: string;
  /** The HTTP request the call came on (its session header and credentials), the upgrade's for a socket. */
  request: FastifyRequest;
  caller: Caller;
  body: unknown;
  stream: boolean;
}

/** Opens the story of a call, on its caller; keeps the body to log when the project logs bodies. */
export function openCallStory(log: RequestLogSink, where: StoryRoute, { id, request, caller, body: raw, stream }: StoryStart): CallStory {
  const body = raw as Body;
  const { principal } = caller;
  const metadata = body?.metadata as { user_id?: unknown } | undefined;
  const story = new CallStory({
    id,
    principal,
    route: where.route,
    wire: where.wire,
    scope: where.scope,
    modelRequested: text(body?.model) ?? '',
    stream,
    sessionId: agentSessionOf(request) ?? text(body?.prompt_cache_key),
    endUser: text(body?.user) ?? text(metadata?.user_id),
    tags: principal.policy?.tags,
    createdAtMs: Date.now(),
  });
  const bodyMode = log.bodiesFor(principal.projectId);
  if (bodyMode !== 'off') {
    story.bodyMode = bodyMode;
    story.requestBody = body;
    story.secrets = credentialsOf(request);
    if (stream) story.events = [];
  }
  caller.story = story;
  return story;
}

/** What a route's onError hook tells its story: the error's code. */
export function storyFailed(request: FastifyRequest, error: unknown): void {
  const code = isAppError(error) ? error.code : (error as { code?: unknown }).code;
  request.callStory?.failed(typeof code === 'string' ? code : null);
}

/**
 * A route's onError: the story learns the error's code; a call refused before its handler
 * opened a story (its key's rate limit, a bad body, a model the route does not serve) opens
 * one here when the caller is known, so the refusal is logged with its code as the client
 * got it. A request with no caller (no key, a bad key or signature) has no project and no
 * entry. Only a failing request runs this: a served call pays nothing for it.
 */
export function storyFailedOrRefused(log: { readonly value: RequestLogSink }, where: StoryRoute) {
  return (request: FastifyRequest, _reply: FastifyReply, error: Error, done: () => void): void => {
    if (request.callStory === null && request.caller !== null) {
      const body = request.body ?? null;
      request.callStory = openCallStory(log.value, where, { id: request.id, request, caller: request.caller, body, stream: false });
      request.callStory.failed(asAppError(error).code);
    } else storyFailed(request, error);
    done();
  };
}

/** A JSON answer goes out: its first byte, its tools, and (when bodies are logged) the answer itself. */
export function storyAnswered<T>(story: CallStory, answer: T): T {
  story.firstByte();
  toolNamesOf(answer, story);
  if (story.keepBodies) story.responseBody = answer;
  return answer;
}

/** A stream's events, telling the story of its first byte, its tools and (when bodies are logged) keeping them. */
export function tapStory<E extends object>(story: CallStory, events: AsyncIterable<E> | Promise<AsyncIterable<E>>): AsyncIterable<E> | Promise<AsyncIterable<E>> {
  return events instanceof Promise ? events.then((opened) => tapped(story, opened)) : tapped(story, events);
}

async function* tapped<E extends object>(story: CallStory, events: AsyncIterable<E>): AsyncGenerator<E> {
  for await (const event of events) {
    story.firstByte();
    toolNamesOf(event, story);
    story.events?.push(event);
    yield event;
  }
}

/** What a call whose client left before its answer is logged with (nginx's "client closed request", as usage records have it). */
const CLIENT_CLOSED = 499;

/** The client left before a JSON answer was sent (no response, so no onResponse): the story goes to the log as 499. */
export function submitAbandoned(log: RequestLogSink, story: CallStory): void {
  if (story.errorCode === null) story.failed('client_closed');
  log.submit(story, CLIENT_CLOSED);
}

/** The route's onResponse: the story goes to the log with the response's status. */
export function submitStory(log: RequestLogSink) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const story = request.callStory;
    if (story !== null) log.submit(story, reply.statusCode);
    done();
  };
}
