/**
 * A loopback HTTP proxy in front of the test S3 server (s3rver) that injects the faults a
 * real network and a real store produce: an object body cut mid-stream (the connection
 * dropped after the answer began) and a persistent 500 on UploadPart. Requests are
 * forwarded byte for byte, Host header included, so the SDK's signatures still verify.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  range: string | undefined;
  ifMatch: string | undefined;
}

export interface FaultRules {
  /** For the n-th object GET (from 1): cut its body after this many bytes, or null to pass it whole. */
  cutGet?(n: number): number | null;
  /** Awaited before the n-th object GET is forwarded (a test changes the object in between). */
  beforeGet?(n: number): Promise<void>;
  /** Answer every UploadPart with 500 InternalError. */
  failUploadParts?: boolean;
}

export interface S3FaultProxy {
  endpoint: string;
  requests: SeenRequest[];
  rules: FaultRules;
  /** Clears the rules, the requests seen and the GET count. */
  reset(): void;
  close(): Promise<void>;
}

const INTERNAL_ERROR = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>';

export async function startS3FaultProxy(targetEndpoint: string): Promise<S3FaultProxy> {
  const target = new URL(targetEndpoint);
  const requests: SeenRequest[] = [];
  const rules: FaultRules = {};
  let gets = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    requests.push({ method: req.method ?? '', path: url.pathname, range: header(req, 'range'), ifMatch: header(req, 'if-match') });
    if (rules.failUploadParts && req.method === 'PUT' && url.searchParams.has('partNumber')) {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/xml' }).end(INTERNAL_ERROR);
      return;
    }
    // Object reads: GET /bucket/key, bare or with the SDK's ?x-id=GetObject (a bucket listing has no key part).
    const query = [...url.searchParams.keys()];
    const isObjectGet = req.method === 'GET' && url.pathname.split('/').filter(Boolean).length > 1 && query.every((k) => k === 'x-id');
    const n = isObjectGet ? ++gets : 0;
    void (async () => {
      if (n > 0) await rules.beforeGet?.(n);
      forward(req, res, target, n > 0 ? (rules.cutGet?.(n) ?? null) : null);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    rules,
    reset: () => {
      for (const rule of Object.keys(rules)) delete rules[rule as keyof FaultRules];
      requests.length = 0;
      gets = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, target: URL, cutAfter: number | null): void {
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (cutAfter === null) {
        answer.pipe(res);
        return;
      }
      if (cutAfter <= 0) {
        res.flushHeaders();
        answer.destroy();
        res.socket?.end(() => res.socket?.destroy());
        return;
      }
      let sent = 0;
      answer.on('data', (chunk: Buffer) => {
        if (sent >= cutAfter) return;
        const part = chunk.subarray(0, cutAfter - sent);
        sent += part.length;
        res.write(part);
        // Everything up to the cut reaches the client; then the connection drops.
        if (sent >= cutAfter) {
          answer.destroy();
          res.socket?.end(() => res.socket?.destroy());
        }
      });
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
}
