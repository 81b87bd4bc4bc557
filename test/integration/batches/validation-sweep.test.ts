/**
 * Batches left `validating` by a creating request that died: the janitor's sweep ends
 * them (failed with validation_interrupted, or cancelled when a cancel was pending) once
 * their heartbeat is older than batches.validation_timeout_seconds, while a validation
 * that is merely long keeps its heartbeat fresh and is never swept. Time is an injected
 * clock moved by hand; reads of the input are intercepted to hold or slow a validation.
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { tempDir } from '../../helpers/databases.js';
import type { BlobStore } from '../../../src/domain/files/blob-store.port.js';
import { LocalDiskBlobStore } from '../../../src/storage/blobs/local-disk.js';
import { BatchesRepository } from '../../../src/storage/db/repositories/batches.repository.js';
import { NO_USAGE, type BatchRecord } from '../../../src/domain/batches/batch.types.js';
import { newId } from '../../../src/domain/shared/ids.js';
import { createBatch, requestLines, uploadOk } from './support/batch-helpers.js';
import { janitorOf, TestClock } from './support/test-clock.js';

const TIMEOUT_S = 600;
const INTERRUPTED = { code: 'validation_interrupted', message: 'Batch validation was interrupted; resubmit the batch', line: null, param: null };

/** Local disk, except that while `onPiece` is set every read comes in 1 KB pieces, each awaiting it first. */
class InterceptedBlobs implements BlobStore {
  onPiece: (() => Promise<void>) | undefined;
  constructor(private readonly inner: BlobStore) {}
  put: BlobStore['put'] = (key, body, options) => this.inner.put(key, body, options);
  stat: BlobStore['stat'] = (key) => this.inner.stat(key);
  delete: BlobStore['delete'] = (key) => this.inner.delete(key);
  async get(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const body = await this.inner.get(key, range);
    const hook = this.onPiece;
    if (!hook) return body;
    return Readable.from(
      (async function* () {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          for (let i = 0; i < chunk.length; i += 1024) {
            await hook();
            yield chunk.subarray(i, i + 1024);
          }
        }
      })(),
    );
  }
}

const clock = new TestClock();
let blobs: InterceptedBlobs;
let server: TestServer;
let key: string;
let projectId: string;

beforeAll(async () => {
  const dataDir = tempDir();
  blobs = new InterceptedBlobs(new LocalDiskBlobStore(path.join(dataDir, 'blobs')));
  server = await startTestServer({
    env: { DATA_DIR: dataDir },
    yaml: `batches:\n  validation_timeout_seconds: ${TIMEOUT_S}\n`,
    overrides: { clock, blobs },
  });
  ({ key, projectId } = await server.newTenant());
});
afterAll(() => server.close());

const getBatch = (id: string) => call(server.baseUrl, 'GET', `/v1/batches/${id}`, { key });
const newestBatch = async () => (await call(server.baseUrl, 'GET', '/v1/batches?limit=1', { key })).body.data[0];
const shardCount = async (id: string) =>
  (await server.core.database.db.selectFrom('batch_shards').select('id').where('batch_id', '=', id).execute()).length;

/** Starts a creation whose validation stops at its first read until `release()`: a request that has died. */
async function hungCreation() {
  const fileId = await uploadOk(server.baseUrl, key, requestLines(20));
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  blobs.onPiece = () => {
    entered();
    return held;
  };
  const response = createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/chat/completions' });
  await reached;
  blobs.onPiece = undefined;
  const batch = await newestBatch();
  expect(batch.status).toBe('validating');
  return { batch, release, response };
}

describe('the validation sweep', () => {
  it('fails a batch whose creating request stopped heartbeating, listed and retrievable with the error', async () => {
    const { batch, release, response } = await hungCreation();
    clock.advance((TIMEOUT_S - 1) * 1000);
    expect((await janitorOf(server.assembly).runOnce()).validationsSwept).toBe(0);
    expect((await getBatch(batch.id)).body.status).toBe('validating');

    clock.advance(2_000);
    const sweptAt = Math.floor(clock.nowMs() / 1000);
    expect((await janitorOf(server.assembly).runOnce()).validationsSwept).toBe(1);
    const swept = (await getBatch(batch.id)).body;
    expect(swept).toMatchObject({ status: 'failed', errors: { object: 'list', data: [INTERRUPTED] } });
    expect(swept.failed_at).toBeGreaterThanOrEqual(sweptAt);
    const listed = (await call(server.baseUrl, 'GET', '/v1/batches', { key })).body.data.find((b: any) => b.id === batch.id);
    expect(listed).toMatchObject({ status: 'failed', errors: { data: [INTERRUPTED] } });

    // Should the request wake up after all, it finds its batch swept and plans nothing.
    release();
    const res = await response;
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'validation_interrupted', message: INTERRUPTED.message });
    expect((await getBatch(batch.id)).body.errors.data).toEqual([INTERRUPTED]);
    expect(await shardCount(batch.id)).toBe(0);
  });

  it('ends a batch cancelled while its validation hung as cancelled', async () => {
    const { batch, release, response } = await hungCreation();
    const cancel = await call(server.baseUrl, 'POST', `/v1/batches/${batch.id}/cancel`, { key });
    expect(cancel.body.status).toBe('cancelling');
    clock.advance((TIMEOUT_S + 1) * 1000);
    expect((await janitorOf(server.assembly).runOnce()).validationsSwept).toBe(1);
    const ended = (await getBatch(batch.id)).body;
    expect(ended).toMatchObject({ status: 'cancelled', errors: null, request_counts: { total: 0, completed: 0, failed: 0 } });
    expect(ended.cancelled_at).toEqual(expect.any(Number));
    release();
    expect((await response).status).toBe(500);
    expect((await getBatch(batch.id)).body.status).toBe('cancelled');
  });

  it('never sweeps a validation that takes long but keeps heartbeating', async () => {
    const fileId = await uploadOk(server.baseUrl, key, requestLines(200)); // ~25 KB: ~25 reads
    const createdAt = clock.nowMs();
    let pieces = 0;
    // Each read takes 0.3 × the timeout of clock time, and the janitor runs every third one.
    blobs.onPiece = async () => {
      clock.advance(TIMEOUT_S * 300);
      if (++pieces % 3 === 0) await janitorOf(server.assembly).runOnce();
    };
    const res = await createBatch(server.baseUrl, key, { input_file_id: fileId, endpoint: '/v1/chat/completions' });
    blobs.onPiece = undefined;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'validating', request_counts: { total: 200 } });
    // Far past the timeout since creation: only the heartbeat kept the sweep away.
    expect(clock.nowMs() - createdAt).toBeGreaterThan(3 * TIMEOUT_S * 1000);
    expect(pieces).toBeGreaterThan(10);
    expect((await getBatch(res.body.id)).body).toMatchObject({ status: 'validating', errors: null });
    expect(await shardCount(res.body.id)).toBeGreaterThan(0);
  });

  it('leaves fresh validations and planned batches alone', async () => {
    const planned = await createBatch(server.baseUrl, key, {
      input_file_id: await uploadOk(server.baseUrl, key, requestLines(2)),
      endpoint: '/v1/chat/completions',
    });
    expect(planned.status).toBe(200);
    clock.advance(10 * TIMEOUT_S * 1000);
    // A row just stored by a request that is still validating.
    const now = clock.nowMs();
    const fresh: BatchRecord = {
      id: newId('batch_'), projectId, payer: { kind: 'project', id: projectId }, createdByKeyId: null, endpoint: '/v1/chat/completions', model: null, outputExpiresAfterSeconds: null, inputFileId: 'file-x',
      inputBlobKey: null, completionWindow: '24h', status: 'validating', metadata: {}, errors: null,
      requestCounts: { total: 0, completed: 0, failed: 0 }, usage: NO_USAGE, outputFileId: null, errorFileId: null, createdAtMs: now,
      expiresAtMs: now + 86_400_000, inProgressAtMs: null, finalizingAtMs: null, completedAtMs: null, failedAtMs: null,
      expiredAtMs: null, cancellingAtMs: null, cancelledAtMs: null, traceParent: null,
    };
    await new BatchesRepository(server.core.database).insert(fresh);
    expect((await janitorOf(server.assembly).runOnce()).validationsSwept).toBe(0);
    expect((await getBatch(fresh.id)).body).toMatchObject({ status: 'validating', errors: null });
    expect((await getBatch(planned.body.id)).body).toMatchObject({ status: 'validating', errors: null });
  });
});
