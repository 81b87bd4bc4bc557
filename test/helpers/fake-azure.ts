/**
 * A fake Azure OpenAI resource on loopback, built from Azure's REST reference: the v1 API
 * (`POST /openai/v1/chat/completions`, `model` the deployment name) and the classic form
 * (`POST /openai/deployments/{deployment}/chat/completions?api-version=…`, 404 "Resource
 * not found" without `api-version`). It checks the auth as Azure does: the `api-key`
 * header, or `Authorization: Bearer` with the Entra token; 401 otherwise. What it accepts
 * it answers in the OpenAI format by relaying the body to a scripted fake OpenAI engine
 * (fake-upstream.ts), so tool loops and streams behave as there. Every request is recorded.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FakeUpstream } from './fake-upstream.js';

export interface AzureRequest {
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeAzure {
  /** `http://127.0.0.1:<port>`: the resource's endpoint, what goes in `base_url`. */
  baseUrl: string;
  requests: AzureRequest[];
  close(): Promise<void>;
}

const CLASSIC = /^\/openai\/deployments\/([^/]+)(\/chat\/completions|\/embeddings)$/;

export async function startFakeAzure(engine: FakeUpstream, credentials: { key: string; token: string }): Promise<FakeAzure> {
  const requests: AzureRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(incoming.url ?? '/', 'http://azure');
      const req: AzureRequest = { path: url.pathname, query: url.searchParams, headers: incoming.headers, body: raw ? JSON.parse(raw) : null };
      requests.push(req);
      const fail = (status: number, message: string) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: String(status), message } }));
      const authorized = incoming.headers['api-key'] === credentials.key || incoming.headers.authorization === `Bearer ${credentials.token}`;
      if (!authorized) return fail(401, `Access denied due to invalid subscription key or wrong API endpoint. Key given: ${String(incoming.headers['api-key'])}`);
      const classic = CLASSIC.exec(url.pathname);
      let operation: string;
      if (url.pathname.startsWith('/openai/v1/')) operation = url.pathname.slice('/openai/v1'.length);
      else if (classic && url.searchParams.get('api-version')) operation = classic[2]!;
      else return fail(404, 'Resource not found');
      const answer = await fetch(`${engine.baseUrl}${operation}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
      const headers: Record<string, string> = { 'content-type': answer.headers.get('content-type') ?? 'application/json' };
      const retryAfter = answer.headers.get('retry-after');
      if (retryAfter !== null) headers['retry-after'] = retryAfter;
      res.writeHead(answer.status, headers);
      for await (const chunk of answer.body!) res.write(chunk);
      res.end();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
