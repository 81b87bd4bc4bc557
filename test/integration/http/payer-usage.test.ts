/**
 * The payer on every usage record, over HTTP and in batches:
 * - a call admitted by a toy scope whose payer is an intermediary is recorded with that
 *   payer, leaves the project's balance alone, and its settlement message goes through
 *   the outbox to a fake intermediary on loopback;
 * - the admin usage listing says who paid;
 * - a project batch's lines still debit the project;
 * - a batch stored with an intermediary payer gets each line's meter from the resolver
 *   (the one registered for intermediaries), and a payer kind nobody meters fails its
 *   lines with a clear error while the batch completes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Assembly } from '../../../src/composition/features.js';
import type { Caller, Principal } from '../../../src/domain/identity/caller.js';
import type { BillingService } from '../../../src/domain/billing/billing.service.js';
import type { Admission, Meter, MeteredCall } from '../../../src/domain/billing/meter.js';
import type { LineMeter } from '../../../src/domain/billing/meter-resolver.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import type { OutboxMessage } from '../../../src/domain/outbox/outbox.types.js';
import { AppError } from '../../../src/domain/shared/errors.js';
import { apiScope } from '../../../src/http/scopes/api-scope.js';
import type { AuthStrategy } from '../../../src/http/auth/strategy.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { MODEL, isTerminal, requestLines, resultsOf, startBatch, uploadOk, waitForBatch } from '../batches/support/batch-helpers.js';
import { scriptUpstream } from '../batches/support/scripted-upstream.js';

const INTERMEDIARY = 'int_toy';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** What a settlement tells the intermediary: enqueued with the usage record, never sent on the request path. */
const settlementOf = (record: UsageRecord): OutboxMessage => ({
  targetKind: 'intermediary',
  idempotencyKey: `usage:${record.id}`,
  payload: { intermediary: record.payer.id, request_id: record.requestId, cost_micros: record.costMicros },
});

/** The toy intermediary's meter on the request path: no credit to hold; settling writes the record and its settlement. */
class IntermediaryMeter implements Meter {
  constructor(private readonly billing: BillingService) {}
  admit(principal: Principal, call: MeteredCall): Admission {
    return {
      settle: async (usage) => {
        const record = this.billing.usageRecord(principal, call, usage);
        await this.billing.write(record, { outbox: [settlementOf(record)] });
        return { record, headers: null };
      },
      release: () => {},
    };
  }
}

/** The toy intermediary's meter of a batch line: collects the record and its settlement for the line's transaction. */
class IntermediaryLineMeter implements LineMeter {
  readonly records: UsageRecord[] = [];
  readonly outbox: OutboxMessage[] = [];
  finished = false;
  constructor(private readonly billing: BillingService) {}
  admit(principal: Principal, call: MeteredCall): Admission {
    return {
      settle: async (usage) => {
        const record = this.billing.usageRecord(principal, call, usage);
        this.records.push(record);
        this.outbox.push(settlementOf(record));
        return { record, headers: null };
      },
      release: () => {},
    };
  }
  finish(): void {
    this.finished = true;
  }
}

/** Admits a request naming its project in `x-toy-project`, paid by the toy intermediary. */
class IntermediaryStrategy implements AuthStrategy {
  readonly needs = 'headers';
  constructor(private readonly meter: Meter) {}
  authenticate(request: FastifyRequest): Caller {
    const projectId = request.headers['x-toy-project'];
    if (typeof projectId !== 'string') throw new AppError('authentication', 'toy project required', { code: 'toy_unauthenticated' });
    return {
      principal: { kind: 'gateway_agent', projectId, keyId: null, subject: 'agent-1', payer: { kind: 'intermediary', intermediaryId: INTERMEDIARY } },
      meter: this.meter,
    };
  }
}

/** The fake intermediary on loopback: remembers every settlement POSTed to it. */
async function startFakeIntermediary() {
  const received: Array<{ idempotencyKey: string | undefined; body: unknown }> = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      received.push({ idempotencyKey: req.headers['idempotency-key'] as string | undefined, body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/settlements`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let upstream: FakeUpstream;
let server: TestServer;
let intermediary: Awaited<ReturnType<typeof startFakeIntermediary>>;
const lineMeters: IntermediaryLineMeter[] = [];

const yaml = (baseUrl: string) =>
  [
    'models:',
    `  ${MODEL}: ${JSON.stringify({ backend: 'openai', base_url: baseUrl, timeout_ms: 20000, price: { input_per_million_usd: 1000, output_per_million_usd: 1000 } })}`,
    'batches:',
    '  retry_base_ms: 20',
    '  lease_seconds: 2',
    '',
  ].join('\n');

function mountIntermediary(app: FastifyInstance, { core }: Assembly): void {
  app.register(apiScope, {
    prefix: '/toy/v1',
    strategy: new IntermediaryStrategy(new IntermediaryMeter(core.billing)),
    routes: [core.routes.chatCompletions],
    policy: { rateLimit: core.apiKeyRateLimit },
  });
  core.meters.register('intermediary', () => {
    const meter = new IntermediaryLineMeter(core.billing);
    lineMeters.push(meter);
    return meter;
  });
  core.outbox.handlers.set('intermediary', {
    async deliver(entry, signal) {
      const res = await fetch(intermediary.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': entry.idempotencyKey },
        body: JSON.stringify(entry.payload),
        signal,
      });
      if (!res.ok) throw new Error(`intermediary answered ${res.status}`);
    },
  });
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  intermediary = await startFakeIntermediary();
  server = await startTestServer({ yaml: yaml(upstream.baseUrl), extendApp: mountIntermediary, startWorkers: true });
});

/** Waits until the fake intermediary received the settlement with this key (the process's deliverer runs in the background). */
async function receivedSettlement(key: string) {
  for (let i = 0; i < 200 && !intermediary.received.some((r) => r.idempotencyKey === key); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return intermediary.received.filter((r) => r.idempotencyKey === key);
}

afterAll(async () => {
  await server.close();
  await intermediary.close();
  await upstream.close();
});

const balanceOf = async (projectId: string) => (await server.core.projects.getProject(projectId)).balanceMicros;
const usageOf = async (projectId: string) => (await server.core.repositories.usage.listByProject(projectId, 100)).items;
const sum = (records: readonly UsageRecord[]) => records.reduce((total, r) => total + r.costMicros, 0);

describe('a call paid by an intermediary', () => {
  it('the process runs an outbox deliverer among its workers, with the handlers features registered', () => {
    expect(server.assembly.workers).toContain(server.core.outbox.deliverer);
    expect([...server.core.outbox.handlers.keys()]).toEqual(['intermediary']);
  });

  it('is recorded with its payer, never debits the project, and its settlement is delivered through the outbox', async () => {
    const tenant = await server.newTenant({ balanceUsd: 100 });
    const hello = { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 9 };
    const res = await call(server.baseUrl, 'POST', '/toy/v1/chat/completions', { headers: { 'x-toy-project': tenant.projectId }, body: hello });
    expect(res.status).toBe(200);
    const [record] = await usageOf(tenant.projectId);
    expect(record).toMatchObject({ payer: { kind: 'intermediary', id: INTERMEDIARY }, keyId: null, requestId: res.headers.get('x-request-id') });
    expect(record!.costMicros).toBeGreaterThan(0);
    expect(await balanceOf(tenant.projectId)).toBe(100_000_000);

    // The admin listing says who paid: the intermediary here, the project for a key's call.
    const viaKey = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key: tenant.key, body: hello });
    expect(viaKey.status).toBe(200);
    const listing = await call(server.baseUrl, 'GET', `/admin/v1/projects/${tenant.projectId}/usage`, { headers: admin });
    expect(listing.status).toBe(200);
    expect(listing.body.data.map((u: any) => [u.request_id, u.payer])).toEqual([
      [viaKey.headers.get('x-request-id'), { kind: 'project', id: tenant.projectId }],
      [res.headers.get('x-request-id'), { kind: 'intermediary', id: INTERMEDIARY }],
    ]);
    const keyRecord = (await usageOf(tenant.projectId)).find((r) => r.payer.kind === 'project')!;
    expect(await balanceOf(tenant.projectId)).toBe(100_000_000 - keyRecord.costMicros);

    // The process's deliverer sends the settlement after the commit, once.
    expect(await receivedSettlement(`usage:${record!.id}`)).toEqual([
      { idempotencyKey: `usage:${record!.id}`, body: { intermediary: INTERMEDIARY, request_id: record!.requestId, cost_micros: record!.costMicros } },
    ]);
  });
});

describe('batch lines and their payer', () => {
  it("a project batch's lines are recorded as paid by the project and debit it", async () => {
    scriptUpstream(upstream);
    const tenant = await server.newTenant({ balanceUsd: 100 });
    const { batch } = await startBatch(server.baseUrl, tenant.key, requestLines(3));
    const done = await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });
    const records = await usageOf(tenant.projectId);
    expect(records).toHaveLength(3);
    expect(records.every((r) => r.payer.kind === 'project' && r.payer.id === tenant.projectId && r.route === 'batch')).toBe(true);
    expect(sum(records)).toBeGreaterThan(0);
    expect(await balanceOf(tenant.projectId)).toBe(100_000_000 - sum(records));
  });

  it('a batch paid by an intermediary meters each line with the meter the resolver gives for intermediaries', async () => {
    scriptUpstream(upstream);
    const tenant = await server.newTenant({ balanceUsd: 100 });
    const fileId = await uploadOk(server.baseUrl, tenant.key, requestLines(3));
    const principal: Principal = { kind: 'gateway_agent', projectId: tenant.projectId, keyId: null, subject: 'agent-1', payer: { kind: 'intermediary', intermediaryId: INTERMEDIARY } };
    const metersBefore = lineMeters.length;
    const batch = await server.features.batches.services.batches.create(principal, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.payer).toEqual({ kind: 'intermediary', id: INTERMEDIARY });
    const done = await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });

    const meters = lineMeters.slice(metersBefore);
    expect(meters).toHaveLength(3);
    expect(meters.every((m) => m.finished && m.records.length === 1)).toBe(true);
    const records = await usageOf(tenant.projectId);
    expect(records).toHaveLength(3);
    expect(records.every((r) => r.payer.kind === 'intermediary' && r.payer.id === INTERMEDIARY && r.route === 'batch' && r.costMicros > 0)).toBe(true);
    expect(await balanceOf(tenant.projectId)).toBe(100_000_000);
    // Each line's settlement was written with its result, and is delivered from the outbox.
    for (const r of records) expect(await receivedSettlement(`usage:${r.id}`)).toHaveLength(1);
  });

  it('a batch whose payer kind has no line meter fails its lines with a clear error, and still completes', async () => {
    scriptUpstream(upstream);
    const tenant = await server.newTenant({ balanceUsd: 100 });
    const fileId = await uploadOk(server.baseUrl, tenant.key, requestLines(2));
    const principal: Principal = { kind: 'receipt', projectId: tenant.projectId, keyId: null, subject: 'rcpt_1', payer: { kind: 'receipt', receiptId: 'rcpt_1' } };
    const requestsBefore = upstream.count('/chat/completions');
    const batch = await server.features.batches.services.batches.create(principal, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await waitForBatch(server.baseUrl, tenant.key, batch.id, isTerminal);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 0, failed: 2 } });
    const { errors } = await resultsOf(server.baseUrl, tenant.key, done);
    expect(errors.map((l: any) => l.error)).toEqual([
      { code: 'internal_error', message: '[legacy:http_500] No meter is registered for batch lines paid by a payer of kind "receipt"', param: null },
      { code: 'internal_error', message: '[legacy:http_500] No meter is registered for batch lines paid by a payer of kind "receipt"', param: null },
    ]);
    expect(upstream.count('/chat/completions')).toBe(requestsBefore);
    expect(await usageOf(tenant.projectId)).toEqual([]);
    expect(await balanceOf(tenant.projectId)).toBe(100_000_000);
  });
});
