import { describe, expect, it } from 'vitest';
import { AppError, type ErrorKind } from '../../src/domain/shared/errors.js';
import { toHttpError } from '../../src/http/errors.js';
import type { WireErrorFormat } from '../../src/wire/error-format.js';
import { OPENAI_ERRORS, openAIErrorEnvelope, openAIRequestFault } from '../../src/wire/openai-errors.js';
import { failedResponseErrors, RESPONSES_ERRORS } from '../../src/wire/responses/errors.js';

const KINDS: readonly ErrorKind[] = [
  'invalid_request', 'context_length', 'authentication', 'payment_required', 'permission', 'not_found', 'conflict',
  'payload_too_large', 'unprocessable', 'insufficient_quota', 'rate_limit', 'internal', 'upstream', 'unavailable',
];

describe('toHttpError', () => {
  it('answers 500 for a SyntaxError thrown by the server, not "Invalid JSON body"', () => {
    const mapped = toHttpError(new SyntaxError('Unexpected token } in JSON at position 7'));
    expect(mapped.status).toBe(500);
    expect(mapped.serverFault).toBe(true);
    expect(mapped.body).toMatchObject({ error: { message: 'Internal server error', code: 'internal_error' } });
  });

  it("answers 400 invalid_json for Fastify's own body-parser fault", () => {
    const fault = Object.assign(new SyntaxError('Unexpected end of JSON input'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 });
    const mapped = toHttpError(fault);
    expect(mapped.status).toBe(400);
    expect(mapped.serverFault).toBe(false);
    expect(mapped.body).toMatchObject({ error: { message: 'Invalid JSON body', code: 'invalid_json' } });
  });

  it('answers 400 with the message for another 4xx a plugin raised', () => {
    const fault = Object.assign(new Error('Unsupported Media Type: text/csv'), { statusCode: 415 });
    const mapped = toHttpError(fault);
    expect(mapped.status).toBe(400);
    expect(mapped.body).toMatchObject({ error: { message: 'Unsupported Media Type: text/csv', code: 'invalid_request_error' } });
  });
});

const answer = { status: 400, requestId: 'req_1' };

describe("OpenAI's error format (src/wire/openai-errors.ts)", () => {
  it('writes the envelope with its fields in order, `line` only when set', () => {
    const error = new AppError('invalid_request', 'model is required', { code: 'invalid_request_error', param: 'model' });
    expect(JSON.stringify(OPENAI_ERRORS.envelope(error, answer))).toBe(
      '{"error":{"message":"model is required","type":"invalid_request_error","code":"invalid_request_error","param":"model"}}',
    );
    const onLine = new AppError('invalid_request', 'bad line', { code: 'invalid_json', line: 3 });
    expect(JSON.stringify(OPENAI_ERRORS.envelope(onLine, answer))).toBe('{"error":{"message":"bad line","type":"invalid_request_error","code":"invalid_json","param":null,"line":3}}');
  });

  it("hides an internal error's message", () => {
    const error = new AppError('internal', 'connection to 10.0.0.3 refused', { code: 'internal_error' });
    expect(openAIErrorEnvelope(error)).toEqual({ error: { message: 'Internal server error', type: 'internal_error', code: 'internal_error', param: null } });
  });

  it("names each kind with OpenAI's type", () => {
    const types = Object.fromEntries(KINDS.map((kind) => [kind, openAIErrorEnvelope(new AppError(kind, 'm')).error.type]));
    expect(types).toEqual({
      invalid_request: 'invalid_request_error',
      context_length: 'invalid_request_error',
      authentication: 'authentication_error',
      payment_required: 'insufficient_quota',
      permission: 'authentication_error',
      not_found: 'invalid_request_error',
      conflict: 'invalid_request_error',
      payload_too_large: 'invalid_request_error',
      unprocessable: 'invalid_request_error',
      insufficient_quota: 'insufficient_quota',
      rate_limit: 'rate_limit_exceeded',
      internal: 'internal_error',
      upstream: 'internal_error',
      unavailable: 'invalid_request_error',
    });
  });

  it('writes the stream error frame as an `error` event with the envelope', () => {
    const error = new AppError('upstream', 'Upstream error for model m (status 503): no capacity', { code: 'upstream_error' });
    expect(OPENAI_ERRORS.streamFrame(error, { status: 502, requestId: 'req_1' })).toBe(
      'event: error\ndata: {"error":{"message":"Upstream error for model m (status 503): no capacity","type":"internal_error","code":"upstream_error","param":null}}\n\n',
    );
  });

  it('writes a transport fault (no request yet) as an invalid_request_error', () => {
    expect(JSON.stringify(openAIRequestFault('The request was not received in time', 'request_timeout'))).toBe(
      '{"error":{"message":"The request was not received in time","type":"invalid_request_error","code":"request_timeout","param":null}}',
    );
  });
});

describe("toHttpError in a route's wire format", () => {
  const format: WireErrorFormat = {
    envelope: (error, { status, requestId }) => ({ type: 'error', error: { kind: error.kind, status }, request_id: requestId }),
    streamFrame: () => 'event: error\ndata: {}\n\n',
  };

  it('writes the body with the format, given the status after the overrides and the request id', () => {
    const mapped = toHttpError(new AppError('context_length', 'too long'), { format, overrides: { context_length: 420 }, request: { id: 'req_9' } });
    expect(mapped.status).toBe(420);
    expect(mapped.body).toEqual({ type: 'error', error: { kind: 'context_length', status: 420 }, request_id: 'req_9' });
  });

  it("keeps a challenge's own body", () => {
    const challenged = new AppError('authentication', 'bad signature', { challenge: { body: { error: 'invalid_gateway_signature' } } });
    expect(toHttpError(challenged, { format }).body).toEqual({ error: 'invalid_gateway_signature' });
  });
});

describe("the gateway's variant of the Responses wire's errors", () => {
  const variant = failedResponseErrors(() => 1_700_000_000);

  it('answers a client error as a failed Responses object echoing the request', () => {
    const error = new AppError('invalid_request', 'input is required', { code: 'invalid_request_error', param: 'input' });
    const body = variant.envelope(error, { status: 400, requestId: 'req_1', requestBody: { model: 'm', temperature: 0.5 } }) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'response',
      created_at: 1_700_000_000,
      status: 'failed',
      error: { message: 'input is required', type: 'invalid_request_error', param: 'input', code: 'invalid_request_error' },
      model: 'm',
      temperature: 0.5,
    });
  });

  it("keeps OpenAI's envelope for a server fault and its stream frame", () => {
    const fault = new AppError('upstream', 'down', { code: 'upstream_error' });
    expect(variant.envelope(fault, { status: 502, requestId: 'req_1' })).toEqual(RESPONSES_ERRORS.envelope(fault, { status: 502, requestId: 'req_1' }));
    expect(variant.streamFrame(fault, { status: 502, requestId: 'req_1' })).toBe(OPENAI_ERRORS.streamFrame(fault, { status: 502, requestId: 'req_1' }));
  });
});
