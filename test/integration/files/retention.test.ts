/**
 * File retention: a file expires 30 days after upload (`expires_at`). From then on it is
 * a 404 on retrieve, download, list, delete and as a batch input, and the janitor
 * removes its blob, unless an unfinished batch still reads it (also after a delete):
 * that blob goes when the batch ends. Time is an injected clock moved by hand.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import {
  createBatch,
  download,
  fileLines,
  isTerminal,
  requestLines,
  upstreamYaml,
  uploadOk,
  waitForBatch,
} from '../batches/support/batch-helpers.js';
import { scriptUpstream } from '../batches/support/scripted-upstream.js';
import { DAY_MS, janitorOf, TestClock } from '../batches/support/test-clock.js';

const RETENTION_MS = 30 * DAY_MS;
const clock = new TestClock();
let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  scriptUpstream(upstream);
  // Workers start only in the last test, after the clock has stopped moving.
  server = await startTestServer({ yaml: upstreamYaml(upstream.baseUrl), overrides: { clock } });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

const blobOf = (fileId: string) => server.core.blobs.stat(`files/${fileId}.jsonl`);
const purgedAt = async (fileId: string) =>
  (await server.core.database.db.selectFrom('files').select('purged_at').where('id', '=', fileId).executeTakeFirstOrThrow()).purged_at;
const listedIds = async (key: string) => (await call(server.baseUrl, 'GET', '/v1/files', { key })).body.data.map((f: any) => f.id);

async function expectGone(key: string, fileId: string) {
  const notFound = { code: 'file_not_found', message: `File ${fileId} not found` };
  const retrieved = await call(server.baseUrl, 'GET', `/v1/files/${fileId}`, { key });
  expect(retrieved.status).toBe(404);
  expect(retrieved.body.error).toMatchObject(notFound);
  expect((await download(server.baseUrl, key, fileId)).status).toBe(404);
  expect(await listedIds(key)).not.toContain(fileId);
  const deleted = await call(server.baseUrl, 'DELETE', `/v1/files/${fileId}`, { key });
  expect(deleted.status).toBe(404);
  expect(deleted.body.error).toMatchObject(notFound);
}

describe('file expiry', () => {
  it('an upload is served until expires_at, then 404 everywhere, and the janitor removes its blob', async () => {
    const { key } = await server.newTenant();
    const fileId = await uploadOk(server.baseUrl, key, requestLines(2));
    const file = (await call(server.baseUrl, 'GET', `/v1/files/${fileId}`, { key })).body;
    expect(file.expires_at - file.created_at).toBe(RETENTION_MS / 1000);

    clock.advance(RETENTION_MS - 60_000);
    expect((await call(server.baseUrl, 'GET', `/v1/files/${fileId}`, { key })).status).toBe(200);
    expect((await download(server.baseUrl, key, fileId)).text).toBe(requestLines(2));
    expect(await listedIds(key)).toContain(fileId);

    clock.advance(120_000);
    await expectGone(key, fileId);
    const batch = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/chat/completions' });
    expect(batch.status).toBe(404);
    expect(batch.body.error).toMatchObject({ code: 'file_not_found', message: `Input file not found: ${fileId}`, param: 'input_file_id' });

    expect(await blobOf(fileId)).not.toBeNull();
    expect((await janitorOf(server.assembly).runOnce()).blobsPurged).toBeGreaterThanOrEqual(1);
    expect(await blobOf(fileId)).toBeNull();
    expect(await purgedAt(fileId)).toEqual(expect.any(Number));
    // The record stays a 404 after its blob is gone.
    await expectGone(key, fileId);
  });

  it('the janitor also removes a deleted file\'s blob whose collection was lost (e.g. a crash after the delete)', async () => {
    const { key, projectId } = await server.newTenant();
    const fileId = await uploadOk(server.baseUrl, key, requestLines(1));
    // The record is marked deleted, as DELETE does, but the process "dies" before collecting the blob.
    await server.core.database.db.updateTable('files').set({ deleted_at: clock.nowMs() }).where('id', '=', fileId).where('project_id', '=', projectId).execute();
    expect(await blobOf(fileId)).not.toBeNull();
    await janitorOf(server.assembly).runOnce();
    expect(await blobOf(fileId)).toBeNull();
  });

  it('a batch in progress keeps its expired and its deleted input until it ends', async () => {
    const { key } = await server.newTenant({ balanceUsd: 1 });
    const expiring = await uploadOk(server.baseUrl, key, requestLines(3, 'exp'));
    const deleting = await uploadOk(server.baseUrl, key, requestLines(3, 'del'));
    clock.advance(RETENTION_MS - 3_600_000);
    const onExpiring = await createBatch(server.baseUrl, key, { input_file_id: expiring, endpoint: '/v1/chat/completions' });
    const onDeleting = await createBatch(server.baseUrl, key, { input_file_id: deleting, endpoint: '/v1/chat/completions' });
    expect([onExpiring.status, onDeleting.status]).toEqual([200, 200]);
    expect((await call(server.baseUrl, 'DELETE', `/v1/files/${deleting}`, { key })).status).toBe(200);
    clock.advance(2 * 3_600_000);
    await expectGone(key, expiring);
    await expectGone(key, deleting);

    await janitorOf(server.assembly).runOnce();
    expect(await blobOf(expiring)).not.toBeNull();
    expect(await blobOf(deleting)).not.toBeNull();

    server.assembly.startWorkers();
    for (const batch of [onExpiring.body, onDeleting.body]) {
      const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
      expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } });
      expect(await fileLines(server.baseUrl, key, done.output_file_id)).toHaveLength(3);
    }
    // The batch's end collects the blobs (just after the batch reads as ended, so poll);
    // the janitor then has nothing left to do for them.
    for (const fileId of [expiring, deleting]) {
      await vi.waitFor(async () => {
        expect(await blobOf(fileId)).toBeNull();
        expect(await purgedAt(fileId)).toEqual(expect.any(Number));
      });
    }
    expect((await janitorOf(server.assembly).runOnce()).blobsPurged).toBe(0);
  });
});
