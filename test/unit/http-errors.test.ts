import { describe, expect, it } from 'vitest';
import { toHttpError } from '../../src/http/errors.js';

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
