/**
 * The stored-response repositories on SQLite and PostgreSQL: owner scoping and expiry on
 * every read, input-item pages, the background queue's lease (one claimer of two), event
 * appends only under the lease, settlement once (its usage and debit written once, by
 * the lease's holder only), cancel, and the sweep of expired responses with their events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import { ResponsesRepository } from '../../../src/storage/db/repositories/responses.repository.js';
import { BackgroundResponsesRepository } from '../../../src/storage/db/repositories/background-responses.repository.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import type { NewStoredResponse, ResponseOwner } from '../../../src/domain/responses/response-store.port.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();
const NOW = Date.now();
const LEASE = 10_000;

describe.each(cases)('stored responses on $name', ({ open }) => {
  let database: Database;
  let projects: ProjectsRepository;
  let store: ResponsesRepository;
  let queue: BackgroundResponsesRepository;
  let owner: ResponseOwner;

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    projects = new ProjectsRepository(database);
    const usage = new UsageRepository(database);
    store = new ResponsesRepository(database);
    queue = new BackgroundResponsesRepository(database, usage);
    const projectId = (await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: NOW })).id;
    owner = { projectId, subject: '' };
  });
  afterAll(() => database.close());

  const response = (overrides: Partial<NewStoredResponse> = {}): NewStoredResponse => ({
    id: newId('resp_'), owner, status: 'completed', resource: { id: 'x', status: 'completed' },
    inputItems: ['a', 'b', 'c'].map((text) => ({ id: `msg_${text}`, type: 'message', role: 'user', content: [{ type: 'input_text', text }] })),
    conversation: [], createdAtMs: NOW, expiresAtMs: NOW + 60_000, ...overrides,
  });
  const queued = async () => {
    const r = response({ status: 'queued', conversation: null, resource: { status: 'queued' } });
    await store.insert(r, { body: { model: 'm', input: 'hi' }, priorItems: [], keyId: null, payer: { kind: 'project', id: owner.projectId }, requestId: 'req_1' });
    return r;
  };
  const usageRecord = (): UsageRecord => ({
    id: newId('usage_'), projectId: owner.projectId, payer: { kind: 'project', id: owner.projectId }, keyId: null, model: 'm', route: '/v1/responses',
    inputTokens: 1, outputTokens: 1, costMicros: 7, requestId: 'req_1', status: 200, createdAtMs: NOW,
  });

  it('finds a response only for its owner, and not once it expired', async () => {
    const r = response();
    await store.insert(r);
    expect((await store.find(owner, r.id, NOW))?.resource).toEqual(r.resource);
    expect(await store.find({ ...owner, subject: 'agent:1' }, r.id, NOW)).toBeUndefined();
    expect(await store.find({ projectId: newUuid(), subject: '' }, r.id, NOW)).toBeUndefined();
    expect(await store.find(owner, r.id, NOW + 60_000)).toBeUndefined();
    expect(await store.delete({ ...owner, subject: 'agent:1' }, r.id, NOW)).toBe(false);
    expect(await store.delete(owner, r.id, NOW)).toBe(true);
    expect(await store.find(owner, r.id, NOW)).toBeUndefined();
  });

  it('pages input items in either order from an item id', async () => {
    const r = response();
    await store.insert(r);
    const ids = async (query: { after?: string; limit: number; order: 'asc' | 'desc' }) => {
      const page = await store.inputItems(owner, r.id, { after: query.after, limit: query.limit, order: query.order }, NOW);
      return { ids: page!.items.map((i) => i.id), hasMore: page!.hasMore };
    };
    expect(await ids({ limit: 2, order: 'desc' })).toEqual({ ids: ['msg_c', 'msg_b'], hasMore: true });
    expect(await ids({ after: 'msg_b', limit: 2, order: 'desc' })).toEqual({ ids: ['msg_a'], hasMore: false });
    expect(await ids({ after: 'msg_a', limit: 5, order: 'asc' })).toEqual({ ids: ['msg_b', 'msg_c'], hasMore: false });
    expect(await ids({ after: 'msg_zzz', limit: 5, order: 'asc' })).toEqual({ ids: [], hasMore: false });
    expect(await store.inputItems({ ...owner, subject: 'x' }, r.id, { after: undefined, limit: 5, order: 'asc' }, NOW)).toBeUndefined();
  });

  it('one of two workers claims a queued response; appends and settlement need its lease; settled once', async () => {
    const r = await queued();
    const [a, b] = await Promise.all([queue.claim('w1', NOW, LEASE), queue.claim('w2', NOW, LEASE)]);
    const claims = [a, b].filter((j) => j?.id === r.id);
    expect(claims).toHaveLength(1);
    const holder = a?.id === r.id ? 'w1' : 'w2';
    const other = holder === 'w1' ? 'w2' : 'w1';
    expect(claims[0]).toMatchObject({ attempt: 1, eventCount: 0, answerStarted: false, status: 'queued', body: { model: 'm', input: 'hi' } });

    const opening = [{ seq: 0, event: { type: 'response.created' } }];
    expect(await queue.append(other, r.id, opening, null, false)).toBe(false);
    expect(await queue.append(holder, r.id, opening, { status: 'in_progress' }, false)).toBe(true);
    expect((await store.find(owner, r.id, NOW))?.status).toBe('in_progress');
    expect(await queue.renew(holder, [r.id], NOW, LEASE)).toEqual(new Set([r.id]));
    expect(await queue.renew(other, [r.id], NOW, LEASE)).toEqual(new Set());

    const balance = async () => (await projects.balanceOf(owner.projectId))!;
    const before = await balance();
    const settlement = {
      resource: { status: 'completed', output: [] }, conversation: [], events: [{ seq: 1, event: { type: 'response.completed' } }], usage: [usageRecord()], outbox: [],
    };
    expect(await queue.settle(other, r.id, settlement)).toBe(false);
    expect(await queue.settle(holder, r.id, settlement)).toBe(true);
    expect(await queue.settle(holder, r.id, { ...settlement, usage: [usageRecord()] })).toBe(false);
    expect(await balance()).toBe(before - 7);
    expect((await queue.eventsAfter(r.id, -1, 10)).map((e) => e.seq)).toEqual([0, 1]);
    expect(await queue.progress(r.id)).toEqual({ status: 'completed', settled: true });
    expect(await queue.claim('w3', NOW + LEASE * 2, LEASE)).toBeUndefined();
  });

  it('an expired lease is claimed again, with what the earlier run stored', async () => {
    const r = await queued();
    expect((await queue.claim('w1', NOW, LEASE))?.id).toBe(r.id);
    await queue.append('w1', r.id, [{ seq: 0, event: { type: 'response.created' } }, { seq: 1, event: { type: 'response.output_text.delta' } }], null, true);
    expect(await queue.claim('w2', NOW + 1, LEASE)).toBeUndefined();
    const again = await queue.claim('w2', NOW + LEASE + 1, LEASE);
    expect(again).toMatchObject({ id: r.id, attempt: 2, eventCount: 2, answerStarted: true });
    expect(await queue.append('w1', r.id, [{ seq: 2, event: {} }], null, true)).toBe(false);
    expect(await queue.settle('w2', r.id, { resource: { status: 'failed' }, conversation: [], events: [], usage: [], outbox: [] })).toBe(true);
  });

  it('cancel: a queued one is settled at once, a running one is left for its worker to settle', async () => {
    const waiting = await queued();
    expect(await queue.cancel(owner, waiting.id, NOW)).toEqual({ resource: { status: 'cancelled' }, running: false });
    expect(await queue.progress(waiting.id)).toEqual({ status: 'cancelled', settled: true });
    expect(await queue.cancel(owner, waiting.id, NOW)).toBeUndefined();

    const running = await queued();
    await queue.claim('w1', NOW, LEASE);
    expect(await queue.cancel({ ...owner, subject: 'agent:1' }, running.id, NOW)).toBeUndefined();
    expect((await queue.cancel(owner, running.id, NOW))?.running).toBe(true);
    expect(await queue.renew('w1', [running.id], NOW, LEASE)).toEqual(new Set());
    expect(await queue.append('w1', running.id, [{ seq: 0, event: {} }], null, false)).toBe(false);
    const before = (await projects.balanceOf(owner.projectId))!;
    expect(await queue.settle('w1', running.id, { resource: { status: 'completed' }, conversation: [], events: [], usage: [usageRecord()], outbox: [] })).toBe(true);
    expect((await store.find(owner, running.id, NOW))?.status).toBe('cancelled');
    expect((await projects.balanceOf(owner.projectId))!).toBe(before - 7);
  });

  it('sweeps expired responses and their events', async () => {
    const r = await queued();
    await queue.claim('w9', NOW, LEASE);
    await queue.append('w9', r.id, [{ seq: 0, event: {} }], null, false);
    const swept = await store.sweepExpired(NOW + 60_001, 1_000);
    expect(swept).toBeGreaterThanOrEqual(1);
    expect(await queue.progress(r.id)).toBeUndefined();
    expect(await queue.eventsAfter(r.id, -1, 10)).toEqual([]);
  });
});
