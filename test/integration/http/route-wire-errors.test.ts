/**
 * A route answers its errors in its wire's format, not its scope's: a route module that
 * declares an Anthropic-like envelope and stream error frame (route config `wireErrors`),
 * mounted on /v1 and on the gateway beside the OpenAI routes, gets both there: for a body
 * that fails validation, an unknown model, a refusal of the scope without a body of its own,
 * and a stream cut after its first event. The scope's own refusal with its own body (the
 * gateway's bad signature) keeps the scope's shape, and the OpenAI routes beside it keep
 * OpenAI's envelope.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelNotFound } from '../../../src/domain/models/model-resolver.port.js';
import { AppError, type ErrorKind } from '../../../src/domain/shared/errors.js';
import type { ScopeDeclaration } from '../../../src/http/scopes/api-scope.js';
import { clientAbortSignal, sendSse } from '../../../src/http/sse.js';
import type { WireErrorFormat } from '../../../src/wire/error-format.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { gatewayEnvVars, signedCall } from '../gateway/setup.js';
import { inferenceYaml } from '../inference/setup.js';

const ERROR_TYPES: Partial<Record<ErrorKind, string>> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  rate_limit: 'rate_limit_error',
};

/** An Anthropic-like wire's errors: `{type: "error", error: {type, message}, request_id}`, and the same as an `error` event. */
const ANTHROPIC_LIKE_ERRORS: WireErrorFormat = {
  envelope: (error, { requestId }) => ({ type: 'error', error: { type: ERROR_TYPES[error.kind] ?? 'api_error', message: error.message }, request_id: requestId }),
  streamFrame: (error, answer) => `event: error\ndata: ${JSON.stringify(ANTHROPIC_LIKE_ERRORS.envelope(error, answer))}\n\n`,
};

const MessagesBody = Type.Object({ model: Type.String(), max_tokens: Type.Integer({ minimum: 1 }), stream: Type.Optional(Type.Boolean()) });
const MODEL = 'gpt-oss-120b';
const MESSAGE_START = { type: 'message_start', message: { id: 'msg_1', model: MODEL } };
const CUT = new AppError('upstream', 'The upstream closed the stream', { code: 'upstream_error' });

/** Streams one event, then fails. */
async function* cutAfterFirstEvent(): AsyncGenerator<unknown> {
  yield MESSAGE_START;
  throw CUT;
}

/** POST /anthropic-like/messages (apart from the real Messages wire) of the Anthropic-like wire: its body, its model check, a stream that is cut. */
function registerMessagesRoute(scope: FastifyInstance): void {
  scope.post<{ Body: { model: string; stream?: boolean } }>(
    '/anthropic-like/messages',
    { schema: { body: MessagesBody, hide: true }, config: { wireErrors: ANTHROPIC_LIKE_ERRORS } },
    async (request, reply) => {
      if (request.body.model !== MODEL) throw modelNotFound(request.body.model);
      if (request.body.stream === true) return sendSse(reply, cutAfterFirstEvent(), clientAbortSignal(reply), { named: true });
      return { type: 'message', model: MODEL, content: [] };
    },
  );
}

/** The route module added to /v1 and the gateway, beside the routes they mount. */
const withMessagesRoute = (scopes: readonly ScopeDeclaration[]): readonly ScopeDeclaration[] =>
  scopes.map((scope) => (scope.prefix === '/v1' || scope.prefix === '/gateway/v1' ? { ...scope, routes: [...scope.routes, registerMessagesRoute] } : scope));

let upstream: FakeUpstream;
let intermediary: FakeIntermediary;
let server: TestServer;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  intermediary = await startFakeIntermediary();
  server = await startTestServer({ yaml: inferenceYaml(upstream.baseUrl), env: gatewayEnvVars(intermediary.baseUrl), scopes: withMessagesRoute });
  ({ key } = await server.newTenant());
});
afterAll(async () => {
  await server.close();
  await intermediary.close();
  await upstream.close();
});

const anthropicError = (type: string, requestId: string | null, message: unknown = expect.any(String)) => ({ type: 'error', error: { type, message }, request_id: requestId });

/** The two scopes' ways of calling the route: an API key on /v1, a signed request on the gateway. */
const SCOPES = {
  '/v1': (body: unknown) => call(server.baseUrl, 'POST', '/v1/anthropic-like/messages', { key, body }),
  '/gateway/v1': (body: unknown) => signedCall(server.baseUrl, '/gateway/v1/anthropic-like/messages', body),
};

describe.each(Object.entries(SCOPES))('a route with its own wire errors on %s', (_prefix, post) => {
  it('answers a body that fails validation in its envelope', async () => {
    const res = await post({ model: MODEL });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(anthropicError('invalid_request_error', res.headers.get('x-request-id'), expect.stringContaining('max_tokens')));
  });

  it('answers an unknown model in its envelope', async () => {
    const res = await post({ model: 'no-such-model', max_tokens: 8 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(anthropicError('invalid_request_error', res.headers.get('x-request-id')));
    expect(res.body.error.message).toContain('no-such-model');
  });

  it('ends a stream cut after its first event with its own error frame, and no [DONE]', async () => {
    const res = await post({ model: MODEL, max_tokens: 8, stream: true });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const frame = JSON.stringify({ type: 'error', error: { type: 'api_error', message: CUT.message }, request_id: requestId });
    expect(res.body).toBe(`event: message_start\ndata: ${JSON.stringify(MESSAGE_START)}\n\nevent: error\ndata: ${frame}\n\n`);
  });

  it('serves the route when nothing fails', async () => {
    const res = await post({ model: MODEL, max_tokens: 8 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type: 'message', model: MODEL, content: [] });
  });
});

describe('beside the route', () => {
  it("the scope's refusal without a body of its own (no API key on /v1) is in the route's envelope", async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/anthropic-like/messages', { body: { model: MODEL, max_tokens: 8 } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(anthropicError('authentication_error', res.headers.get('x-request-id')));
  });

  it("the gateway's bad signature keeps the gateway's own body", async () => {
    const res = await signedCall(server.baseUrl, '/gateway/v1/anthropic-like/messages', { model: MODEL, max_tokens: 8 }, { signature: 'v1,t=1,kid=k1,sig=00' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_gateway_signature' });
  });

  it("the OpenAI routes of the same scopes keep OpenAI's envelope", async () => {
    const v1 = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(v1.status).toBe(400);
    expect(v1.body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code: 'model_not_found', param: 'model' } });
    const gateway = await signedCall(server.baseUrl, '/gateway/v1/chat/completions', { model: 'gpt-oss-120b' });
    expect(gateway.status).toBe(400);
    expect(gateway.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
  });
});
