/**
 * A loopback proxy standing in for the intermediary's edge: it signs each request it
 * forwards to Sluice with the documented construction (new gw-request-id per request,
 * the configured agent id), and relays the answer, trailers included. It records the
 * headers and trailers of every answer for the tests. The client's other headers are not
 * carried, except those named in `forwardHeaders` (e.g. `anthropic-version`).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from '../../helpers/fake-intermediary.js';

export interface SigningProxy {
  baseUrl: string;
  agentId: string;
  answers: { path: string; requestId: string; status: number; headers: http.IncomingHttpHeaders; trailers: NodeJS.Dict<string> }[];
  close(): Promise<void>;
}

export async function startSigningProxy(
  target: string,
  key: { kid: string; secret: string },
  agentId = 'agt_sdk',
  forwardHeaders: readonly string[] = [],
): Promise<SigningProxy> {
  const answers: SigningProxy['answers'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const requestId = `gwreq_${randomUUID()}`;
      const path = req.url!;
      const forwarded = Object.fromEntries(forwardHeaders.filter((name) => req.headers[name] !== undefined).map((name) => [name, req.headers[name]]));
      const headers: http.OutgoingHttpHeaders = {
        ...forwarded,
        'content-type': req.headers['content-type'] ?? 'application/json',
        accept: req.headers.accept ?? '*/*',
        'gw-request-id': requestId,
        'gw-agent-id': agentId,
        'gw-signature': sign({ ...key, t: Math.floor(Date.now() / 1000), method: req.method!, path, body, requestId, agentId }),
        'content-length': String(body.length),
      };
      const upstream = http.request(`${target}${path}`, { method: req.method, headers, agent: false }, (answer) => {
        const forwarded = { ...answer.headers };
        delete forwarded['content-length'];
        delete forwarded['transfer-encoding'];
        res.writeHead(answer.statusCode ?? 502, forwarded);
        answer.on('data', (c: Buffer) => res.write(c));
        answer.on('end', () => {
          answers.push({ path, requestId, status: answer.statusCode ?? 0, headers: answer.headers, trailers: { ...answer.trailers } });
          if (Object.keys(answer.trailers).length > 0) res.addTrailers(answer.trailers as Record<string, string>);
          res.end();
        });
      });
      upstream.on('error', () => res.headersSent ? res.destroy() : res.writeHead(502).end());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    agentId,
    answers,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
