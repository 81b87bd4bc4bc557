/**
 * The batch repositories on SQLite and PostgreSQL: status transitions are conditional,
 * shard claims are exclusive under races, leases expire, line results are first-writer-
 * wins with their usage written (and debited) exactly once, finalization is exclusive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectCases } from '../../helpers/databases.js';
import type { Database } from '../../../src/storage/db/database.js';
import { migrateToLatest } from '../../../src/storage/db/migrate.js';
import { ProjectsRepository } from '../../../src/storage/db/repositories/projects.repository.js';
import { ApiKeysRepository } from '../../../src/storage/db/repositories/api-keys.repository.js';
import { UsageRepository } from '../../../src/storage/db/repositories/usage.repository.js';
import type { UsageRecord } from '../../../src/domain/billing/usage.types.js';
import { BatchesRepository } from '../../../src/storage/db/repositories/batches.repository.js';
import { BatchShardsRepository } from '../../../src/storage/db/repositories/batch-shards.repository.js';
import { BatchLineResultsRepository } from '../../../src/storage/db/repositories/batch-line-results.repository.js';
import { BatchFinalizationRepository } from '../../../src/storage/db/repositories/batch-finalization.repository.js';
import { BillingService } from '../../../src/domain/billing/billing.service.js';
import { CreditMeter } from '../../../src/domain/billing/credit-meter.js';
import { ReservationBook } from '../../../src/domain/billing/reservations.js';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
import { NO_USAGE, type BatchRecord, type LineResult, type ShardPlan } from '../../../src/domain/batches/batch.types.js';
import { outputFileRecord } from '../../../src/domain/files/files.service.js';
import { systemClock } from '../../../src/domain/shared/clock.js';
import { newId, newUuid } from '../../../src/domain/shared/ids.js';

const cases = await dialectCases();

function batchRecord(projectId: string, keyId: string | null, overrides: Partial<BatchRecord> = {}): BatchRecord {
  const now = Date.now();
  return {
    id: newId('batch_'), projectId, payer: { kind: 'project', id: projectId }, createdByKeyId: keyId, endpoint: '/v1/chat/completions', model: null, outputExpiresAfterSeconds: null, inputFileId: 'file-x',
    inputBlobKey: 'files/file-x.jsonl', completionWindow: '24h', status: 'validating', metadata: { a: 1 }, errors: null,
    requestCounts: { total: 0, completed: 0, failed: 0 }, usage: NO_USAGE, outputFileId: null, errorFileId: null, createdAtMs: now,
    expiresAtMs: now + 86_400_000, inProgressAtMs: null, finalizingAtMs: null, completedAtMs: null, failedAtMs: null,
    expiredAtMs: null, cancellingAtMs: null, cancelledAtMs: null, traceParent: null, ...overrides,
  };
}

const plans = (n: number, perShard = 2): ShardPlan[] =>
  Array.from({ length: n }, (_, i) => ({
    shardNo: i, firstLine: i * perShard + 1, lastLine: (i + 1) * perShard, startByte: i * 100, endByte: (i + 1) * 100, lineCount: perShard,
  }));

const result = (batchId: string, lineNo: number, ok = true): LineResult => ({
  batchId, lineNo, ok, errorCode: ok ? null : 'internal_error', lineJson: JSON.stringify({ line: lineNo }), usage: NO_USAGE,
});

describe.each(cases)('batch repositories on $name', ({ open }) => {
  let database: Database;
  let batches: BatchesRepository;
  let shards: BatchShardsRepository;
  let results: BatchLineResultsRepository;
  let finalization: BatchFinalizationRepository;
  let projects: ProjectsRepository;
  let keys: ApiKeysRepository;
  let usage: UsageRepository;
  let projectId: string;
  let keyId: string;

  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database);
    projects = new ProjectsRepository(database);
    keys = new ApiKeysRepository(database);
    usage = new UsageRepository(database);
    batches = new BatchesRepository(database);
    shards = new BatchShardsRepository(database);
    results = new BatchLineResultsRepository(database, usage);
    finalization = new BatchFinalizationRepository(database);
    projectId = (await projects.insert({ id: newUuid(), name: 'p', balanceMicros: 1_000, createdAtMs: Date.now() })).id;
    keyId = newId('key_');
    await keys.insert({ id: keyId, projectId, name: 'k', prefix: 'sk', keyHash: newId('h'), createdAtMs: Date.now(), revokedAtMs: null, policy: null, previousKeyHash: null, previousValidUntilMs: null });
  });
  afterAll(() => database.close());

  const usageRecord = (requestId: string, cost = 5): UsageRecord => ({
    id: newId('usage_'), projectId, payer: { kind: 'project', id: projectId }, keyId, model: 'm', route: 'batch', inputTokens: 3, outputTokens: 2, costMicros: cost,
    requestId, status: 200, createdAtMs: Date.now(),
  });

  it('round-trips a batch and stores its shard plan (more than one insert chunk) atomically', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    expect(await batches.findForProject(projectId, batch.id)).toMatchObject({ id: batch.id, metadata: { a: 1 }, status: 'validating' });
    expect(await batches.findForProject(newUuid(), batch.id)).toBeUndefined();
    await batches.markValidated(batch.id, 900, plans(450));
    const claims = await shards.claimsOf(batch.id);
    expect(claims).toHaveLength(450);
    expect((await batches.find(batch.id))!.requestCounts.total).toBe(900);
  });

  it('keeps the creating request\'s traceparent for the runner (null when there was none)', async () => {
    const traceParent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const traced = batchRecord(projectId, keyId, { traceParent, inputBlobKey: 'files/a.jsonl' });
    const untraced = batchRecord(projectId, keyId, { inputBlobKey: 'files/b.jsonl' });
    await batches.insert(traced);
    await batches.insert(untraced);
    expect((await batches.find(traced.id))!.traceParent).toBe(traceParent);
    expect((await batches.runInfo(traced.id))!.traceParent).toBe(traceParent);
    expect((await batches.find(untraced.id))!.traceParent).toBeNull();
    expect((await batches.runInfo(untraced.id))!.traceParent).toBeNull();
  });

  it('status transitions are conditional', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    expect(await batches.requestCancel(projectId, batch.id, 1000)).toBe(true);
    expect(await batches.requestCancel(projectId, batch.id, 2000)).toBe(false);
    expect((await batches.find(batch.id))!.cancellingAtMs).toBe(1000);
    await batches.markFailed(batch.id, [{ code: 'c', message: 'm', line: 3, param: null }], 3000);
    const failed = (await batches.find(batch.id))!;
    expect(failed).toMatchObject({ status: 'failed', failedAtMs: 3000, errors: [{ code: 'c', message: 'm', line: 3, param: null }] });
    expect(await batches.requestCancel(projectId, batch.id, 4000)).toBe(false);
    await batches.markInProgress(batch.id, 5000);
    expect((await batches.find(batch.id))!.status).toBe('failed');
  });

  it('lineGate sees cancellation, the window and a revoked key; activeUsesBlob only active batches', async () => {
    const revokedKey = newId('key_');
    await keys.insert({ id: revokedKey, projectId, name: 'r', prefix: 'sk', keyHash: newId('h'), createdAtMs: Date.now(), revokedAtMs: null, policy: null, previousKeyHash: null, previousValidUntilMs: null });
    const batch = batchRecord(projectId, revokedKey, { inputBlobKey: 'files/gate.jsonl' });
    await batches.insert(batch);
    expect(await batches.lineGate(batch.id)).toMatchObject({ status: 'validating', keyRevoked: false, expiresAtMs: batch.expiresAtMs });
    await keys.revoke(revokedKey, Date.now());
    expect((await batches.lineGate(batch.id))!.keyRevoked).toBe(true);
    expect(await batches.activeUsesBlob('files/gate.jsonl')).toBe(true);
    await batches.markFailed(batch.id, [], Date.now());
    expect(await batches.activeUsesBlob('files/gate.jsonl')).toBe(false);
  });

  it('claims are exclusive under a race, and expired leases are claimable again', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    await batches.markValidated(batch.id, 6, plans(3));
    const now = Date.now();
    // Other tests' pending shards exist too: race on this batch's three only, by claiming until none is left.
    const mine = async (owner: string) => {
      const got = [];
      for (;;) {
        const s = await shards.claim(owner, now, 60_000);
        if (!s) return got;
        got.push(s);
      }
    };
    const [a, b, c] = await Promise.all([mine('w1'), mine('w2'), mine('w3')]);
    const all = [...a, ...b, ...c].filter((s) => s.batchId === batch.id);
    expect(all.map((s) => s.shardNo).sort()).toEqual([0, 1, 2]);
    expect(await shards.claim('w4', now, 60_000)).toBeUndefined();
    // w1 loses its lease once it expires; renewals by a non-owner do nothing.
    const first = all[0]!;
    const owner = a.includes(first) ? 'w1' : b.includes(first) ? 'w2' : 'w3';
    expect((await shards.renew('intruder', [first.id], now, 60_000)).size).toBe(0);
    expect((await shards.renew(owner, [first.id], now, 60_000)).has(first.id)).toBe(true);
    const later = now + 120_000;
    const retaken = [];
    for (let s = await shards.claim('w5', later, 1000); s; s = await shards.claim('w5', later, 1000)) retaken.push(s);
    expect(retaken.filter((s) => s.batchId === batch.id)).toHaveLength(3);
    expect((await shards.renew(owner, [first.id], later, 1000)).size).toBe(0);
    await shards.markDone(first.id);
    await shards.release('w5', all[1]!.id);
    const again = await shards.claim('w6', later, 1000);
    expect(again?.id).toBe(all[1]!.id);
  });

  it('a line result is recorded, and its usage written and debited, exactly once', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    const before = (await projects.balanceOf(projectId))!;
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) => results.insert(result(batch.id, 1), [usageRecord(`req_race_${i}`, 5)], Date.now())),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect((await projects.balanceOf(projectId))!).toBe(before - 5);
    const records = (await usage.listByProject(projectId, 100)).items.filter((u) => u.requestId.startsWith('req_race_'));
    expect(records).toHaveLength(1);
    expect(await results.insert(result(batch.id, 2, false), [], Date.now())).toBe(true);
    expect((await results.counts([batch.id])).get(batch.id)).toEqual({ completed: 1, failed: 1 });
    expect(await results.hasErrorCode(batch.id, 'internal_error')).toBe(true);
    expect(await results.doneLines(batch.id, 1, 5)).toEqual(new Set([1, 2]));
    expect(await results.countInRange(batch.id, 2, 9)).toBe(1);
  });

  it('a group commit carrying the same line twice records and bills it once', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    const before = (await projects.balanceOf(projectId))!;
    const inserted = await results.insertMany(
      [
        { result: result(batch.id, 7), usage: [usageRecord('req_dup_a', 3)] },
        { result: result(batch.id, 7), usage: [usageRecord('req_dup_b', 3)] },
        { result: result(batch.id, 8), usage: [usageRecord('req_dup_c', 4)] },
      ],
      Date.now(),
    );
    expect(inserted).toEqual(new Set([0, 2]));
    expect((await projects.balanceOf(projectId))!).toBe(before - 7);
    const again = await results.insertMany([{ result: result(batch.id, 8), usage: [usageRecord('req_dup_d', 4)] }], Date.now());
    expect(again.size).toBe(0);
    expect((await projects.balanceOf(projectId))!).toBe(before - 7);
  });

  it('streams recorded lines in input order across pages', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    const order = Array.from({ length: 1_205 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    await database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < order.length; i += 200) {
        const rows = order.slice(i, i + 200).map((n) => ({ batch_id: batch.id, line_no: n, ok: 1, error_code: null, line_json: `{"n":${n}}`, created_at: 0 }));
        await trx.insertInto('batch_line_results').values(rows).execute();
      }
    });
    const seen: number[] = [];
    for await (const line of results.lines(batch.id, true)) seen.push(JSON.parse(line).n);
    expect(seen).toEqual(Array.from({ length: 1_205 }, (_, i) => i + 1));
  });

  it('finalization: ready only when every shard is done; one finalizer; conditional finish with its files', async () => {
    const batch = batchRecord(projectId, keyId);
    await batches.insert(batch);
    expect(await batches.markValidated(batch.id, 2, plans(1))).toBe(true);
    const now = Date.now();
    await batches.markInProgress(batch.id, now);
    expect(await finalization.ready(now, 100)).not.toContain(batch.id);
    await shards.markDone(`${batch.id}:0`);
    expect(await finalization.ready(now, 100)).toContain(batch.id);
    expect(await finalization.claim(batch.id, 'f1', now, 60_000)).toBe('in_progress');
    expect(await finalization.claim(batch.id, 'f2', now, 60_000)).toBeUndefined();
    await finalization.markFinalizing(batch.id, now);
    const file = outputFileRecord({ id: newId('file-'), projectId, batchId: batch.id, filename: 'o.jsonl', blobKey: 'batches/o', bytes: 3, isError: false, createdAtMs: now });
    const patch = { status: 'completed' as const, atMs: now, counts: { total: 2, completed: 2, failed: 0 }, outputFileId: file.id, errorFileId: null };
    expect(await finalization.finish(batch.id, 'f2', 'finalizing', patch, [file])).toBe(false);
    expect(await finalization.finish(batch.id, 'f1', 'in_progress', patch, [file])).toBe(false);
    expect(await database.db.selectFrom('files').select('id').where('id', '=', file.id).executeTakeFirst()).toBeUndefined();
    expect(await finalization.finish(batch.id, 'f1', 'finalizing', patch, [file])).toBe(true);
    const ended = (await batches.find(batch.id))!;
    expect(ended).toMatchObject({ status: 'completed', completedAtMs: now, outputFileId: file.id, requestCounts: { total: 2, completed: 2, failed: 0 } });
    expect(ended.finalizingAtMs).toBe(now);
    expect(await finalization.ready(now, 100)).not.toContain(batch.id);
  });

  it("a batch line's collecting meter holds credit, collects its record without writing it, and releases the hold on finish", async () => {
    const billing = new BillingService(projects, usage, () => ({ inputPerMillionUsd: 1, outputPerMillionUsd: 0 }), systemClock);
    const credit = new CreditMeter(billing, new ReservationBook());
    const before = (await usage.listByProject(projectId, 1000)).items.length;
    const balance = (await projects.balanceOf(projectId))!;
    const principal = apiKeyPrincipal(projectId, keyId, 'batch_line');
    const call = { model: 'm', route: 'batch', requestId: 'req_deferred', inputTokens: 2, maxOutputTokens: 0 };
    const meter = credit.collecting();
    const admission = await meter.admit(principal, { ...call, estimateMicros: balance });
    // The line's hold takes the whole balance until the line is written.
    await expect(credit.admit(principal, { ...call, estimateMicros: 1 })).rejects.toMatchObject({ kind: 'insufficient_quota' });
    await admission.settle({ inputTokens: 2, outputTokens: 0, status: 200 });
    expect(meter.records).toHaveLength(1);
    expect(meter.records[0]!).toMatchObject({ projectId, keyId, route: 'batch', requestId: 'req_deferred', costMicros: 2 });
    expect((await usage.listByProject(projectId, 1000)).items.length).toBe(before);
    meter.finish();
    (await credit.admit(principal, { ...call, estimateMicros: 1 })).release();
  });
});
