/**
 * A fake payment intermediary on loopback (node:http), speaking Sluice's contract:
 * `POST /v1/allowance/check` (read key) and `POST /v1/usage/report` (write key). It
 * records every check and report, deduplicates reported events by `idempotencyKey`, and
 * misbehaves on request, per agent for checks and per call for reports.
 *
 *   const gw = await startFakeIntermediary();
 *   gw.check('agt_1', { kind: 'deny', reason: 'usage_exhausted' });
 *   gw.check('agt_2', { kind: 'delay', ms: 3000 });   // or status / reset / malformed
 *   gw.failReports(2, 500);                           // the next two reports answer 500
 *   gw.checks; gw.accepted; gw.reports
 *
 * Also exports `sign()`, the documented signer, for test clients.
 */
import { createHmac } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const READ_KEY = 'gw-read-key-0123456789';
export const WRITE_KEY = 'gw-write-key-0123456789';

export type CheckBehavior =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  | { kind: 'delay'; ms: number }
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'reset' }
  | { kind: 'malformed' };

export interface UsageEventWire {
  requestId: string;
  agentId: string;
  service: string;
  meter: string;
  quantity: number;
  timestamp: string;
  idempotencyKey: string;
}

export interface FakeIntermediary {
  baseUrl: string;
  checks: any[];
  /** Every report body received, duplicates included. */
  reports: { events: UsageEventWire[] }[];
  /** Events accepted once each, by idempotency key. */
  accepted: Map<string, UsageEventWire>;
  check(agentId: string, behavior: CheckBehavior): void;
  /** The next `count` reports answer `status` (with `Retry-After: retryAfter` when given). */
  failReports(count: number, status: number, retryAfter?: string): void;
  /** Every report answers `status` until reset. */
  refuseReports(status: number | null): void;
  /** Reports whose events `matches` answer `status` until reset (others are accepted). */
  refuseReportsWith(status: number, matches: (events: UsageEventWire[]) => boolean): void;
  /** Resolves once `n` distinct events were accepted. */
  waitForAccepted(n: number, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

export function sign(args: {
  secret: string;
  kid: string;
  t: number | string;
  method: string;
  path: string;
  body: Buffer | string;
  requestId?: string | null;
  agentId?: string | null;
}): string {
  const body = typeof args.body === 'string' ? Buffer.from(args.body) : args.body;
  const message = Buffer.concat([
    Buffer.from(`${args.t}\n${args.method}\n${args.path}\n`),
    body,
    Buffer.from(`\n${args.requestId ?? ''}\n${args.agentId ?? ''}`),
  ]);
  const v1 = createHmac('sha256', args.secret).update(message).digest('hex');
  return `t=${args.t},kid=${args.kid},v1=${v1}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

export async function startFakeIntermediary(): Promise<FakeIntermediary> {
  const behaviors = new Map<string, CheckBehavior>();
  let reportFailures: { status: number; retryAfter?: string }[] = [];
  let refuseAll: number | null = null;
  let refuseMatching: { status: number; matches: (events: UsageEventWire[]) => boolean } | null = null;
  const checks: any[] = [];
  const reports: { events: UsageEventWire[] }[] = [];
  const accepted = new Map<string, UsageEventWire>();
  let waiters: (() => void)[] = [];
  const sockets = new Set<Socket>();

  const onCheck = async (req: IncomingMessage, res: ServerResponse, body: any) => {
    if (req.headers.authorization !== `Bearer ${READ_KEY}`) return json(res, 401, { error: 'unauthorized' });
    checks.push(body);
    const behavior = behaviors.get(String(body?.agentId)) ?? { kind: 'allow' };
    switch (behavior.kind) {
      case 'deny':
        return json(res, 200, { allowed: false, reason: behavior.reason });
      case 'delay':
        await new Promise((r) => setTimeout(r, behavior.ms));
        return res.destroyed ? undefined : json(res, 200, { allowed: true, allowanceId: 'alw_late' });
      case 'status':
        return json(res, behavior.status, { error: 'unavailable' }, behavior.retryAfter ? { 'retry-after': behavior.retryAfter } : {});
      case 'reset':
        return req.socket.destroy();
      case 'malformed':
        return res.writeHead(200, { 'content-type': 'application/json' }).end('{"allowed": ');
      default:
        return json(res, 200, { allowed: true, allowanceId: `alw_${checks.length}` });
    }
  };

  const onReport = (req: IncomingMessage, res: ServerResponse, body: any) => {
    if (req.headers.authorization !== `Bearer ${WRITE_KEY}`) return json(res, 401, { error: 'unauthorized' });
    reports.push(body);
    const refusedHere = refuseMatching?.matches(body.events) ? refuseMatching.status : null;
    const refusal = refuseAll ?? refusedHere;
    const failure: { status: number; retryAfter?: string } | undefined = refusal !== null ? { status: refusal } : reportFailures.shift();
    if (failure) return json(res, failure.status, { error: 'failed' }, failure.retryAfter ? { 'retry-after': failure.retryAfter } : {});
    let fresh = 0;
    for (const event of body.events as UsageEventWire[]) {
      if (accepted.has(event.idempotencyKey)) continue;
      accepted.set(event.idempotencyKey, event);
      fresh++;
    }
    json(res, 200, { accepted: fresh, duplicates: body.events.length - fresh });
    for (const wake of waiters.splice(0)) wake();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(res, 400, { error: 'invalid json' });
      }
      if (req.method === 'POST' && req.url === '/v1/allowance/check') return void onCheck(req, res, body);
      if (req.method === 'POST' && req.url === '/v1/usage/report') return onReport(req, res, body);
      json(res, 404, { error: 'not found' });
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    checks,
    reports,
    accepted,
    check: (agentId, behavior) => void behaviors.set(agentId, behavior),
    failReports: (count, status, retryAfter) => {
      for (let i = 0; i < count; i++) reportFailures.push({ status, retryAfter });
    },
    refuseReports: (status) => {
      refuseAll = status;
      refuseMatching = null;
    },
    refuseReportsWith: (status, matches) => void (refuseMatching = { status, matches }),
    async waitForAccepted(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (accepted.size < n) {
        if (Date.now() > deadline) throw new Error(`waited for ${n} accepted events, have ${accepted.size}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    reset() {
      behaviors.clear();
      reportFailures = [];
      refuseAll = null;
      refuseMatching = null;
      checks.length = 0;
      reports.length = 0;
      accepted.clear();
      waiters = [];
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
