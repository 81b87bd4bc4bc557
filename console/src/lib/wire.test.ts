import { describe, expect, it } from 'vitest';
import { errorFromAnswer, query, requestHeaders } from './api.js';
import { SseParser } from './sse.js';
import { pythonLiteral, snippet } from './snippets.js';
import { MAX_UPLOAD_BYTES, uploadProblem } from './upload.js';
import { parseRoute } from './route.js';

describe('API client', () => {
  it("reads the envelope's message, code and the request id", () => {
    const error = errorFromAnswer(404, 'req_1', JSON.stringify({ error: { message: 'No such batch: b', code: 'batch_not_found' } }));
    expect({ message: error.message, status: error.status, code: error.code, requestId: error.requestId }).toEqual({
      message: 'No such batch: b',
      status: 404,
      code: 'batch_not_found',
      requestId: 'req_1',
    });
    expect(errorFromAnswer(502, null, '<html>bad gateway</html>').message).toBe('<html>bad gateway</html>');
    expect(errorFromAnswer(500, null, '').message).toBe('The server answered 500');
  });

  it('sends the CSRF token on state-changing requests and the operator project on /v1 only', () => {
    const ctx = { csrfToken: 'tok', projectId: 'p1' };
    expect(requestHeaders('GET', '/v1/files', ctx)).toEqual({ 'x-project-id': 'p1' });
    expect(requestHeaders('POST', '/v1/files', ctx)).toEqual({ 'x-csrf-token': 'tok', 'x-project-id': 'p1' });
    expect(requestHeaders('DELETE', '/admin/keys/k', ctx)).toEqual({ 'x-csrf-token': 'tok' });
    expect(requestHeaders('POST', '/v1/files', { csrfToken: null, projectId: null })).toEqual({});
  });

  it('builds query strings from defined values only', () => {
    expect(query({ a: 1, b: undefined, c: '', d: null, e: 'x y' })).toBe('?a=1&e=x+y');
    expect(query({})).toBe('');
  });
});

describe('chat stream reader', () => {
  it('joins events split across reads and reads usage and [DONE]', () => {
    const parser = new SseParser();
    const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;
    const text = chunk('Hel') + chunk('lo') + `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\ndata: [DONE]\n\n`;
    const events = [...parser.push(text.slice(0, 17)), ...parser.push(text.slice(17, 60)), ...parser.push(text.slice(60))];
    expect(events.map((e) => e.delta).join('')).toBe('Hello');
    expect(events.find((e) => e.usage)?.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2 });
    expect(events.at(-1)?.done).toBe(true);
  });

  it('throws the error event of a stream that failed', () => {
    expect(() => new SseParser().push(`data: ${JSON.stringify({ error: { message: 'upstream died' } })}\n\n`)).toThrow('upstream died');
  });
});

describe('copy as code', () => {
  const body = { model: 'm', messages: [{ role: 'user', content: "it's" }], stream: true };
  it('writes the exact body for curl, shell-quoted', () => {
    const curl = snippet('curl', 'http://h:8080', '/chat/completions', body);
    expect(curl).toContain('curl http://h:8080/v1/chat/completions');
    expect(curl).toContain(`"content": "it'\\''s"`);
  });
  it('uses the SDK method for the route in openai-node and Python', () => {
    expect(snippet('node', 'http://h', '/chat/completions', body)).toContain("client.chat.completions.create({\n  \"model\": \"m\"");
    expect(snippet('python', 'http://h', '/embeddings', { input: 'x' })).toContain('client.embeddings.create(**{');
    expect(pythonLiteral({ a: true, b: null, c: [false, 1] })).toBe('{\n    "a": True,\n    "b": None,\n    "c": [\n        False,\n        1\n    ]\n}');
  });
});

describe('uploads and routes', () => {
  it('refuses empty and over-100-MB files before sending', () => {
    expect(uploadProblem({ size: 0, name: 'a' })).toBe('a is empty');
    expect(uploadProblem({ size: MAX_UPLOAD_BYTES, name: 'a' })).toBeNull();
    expect(uploadProblem({ size: MAX_UPLOAD_BYTES + 1, name: 'big.jsonl' })).toBe('big.jsonl is 100.0 MB; the limit is 100 MB');
  });
  it('reads hash routes', () => {
    expect(parseRoute('')).toEqual({ page: 'home', id: null });
    expect(parseRoute('#/batches/batch_1')).toEqual({ page: 'batches', id: 'batch_1' });
    expect(parseRoute('#/usage')).toEqual({ page: 'usage', id: null });
  });
});
