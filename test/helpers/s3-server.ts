/**
 * A real S3 server on loopback for tests and benches: s3rver (npm), which stores objects
 * on disk and speaks the S3 REST protocol the AWS SDK uses. s3rver does not implement
 * AbortMultipartUpload (it answers 405), which the blob store relies on to leave no parts
 * behind; this helper adds that one operation in front of its router, doing what S3 does
 * (remove the upload and its parts), and exposes the pending uploads so tests can assert
 * that none are orphaned.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import S3rver from 's3rver';
import type { S3BlobConfig } from '../../src/config/schema.js';
import { tempDir } from './databases.js';

export interface FakeS3 {
  endpoint: string;
  bucket: string;
  /** A blob config for this server (s3rver's default account). */
  config(prefix?: string): S3BlobConfig;
  /** Multipart uploads started and neither completed nor aborted. */
  pendingUploads(): Promise<string[]>;
  close(): Promise<void>;
}

interface S3rverInternals {
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
}

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
}

export async function startFakeS3(options: { bucket?: string; port?: number } = {}): Promise<FakeS3> {
  const bucket = options.bucket ?? 'sluice-test';
  const directory = tempDir('sluice-s3-');
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: true,
    directory,
    resetOnClose: true,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const internals = server as unknown as S3rverInternals;
  const uploadsDir = (name: string) => internals.store.getResourcePath(name, undefined, 'uploads');
  // AbortMultipartUpload: DELETE /bucket/key?uploadId=…, answered 204 as S3 does.
  internals.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string' || !/^[0-9a-f]+$/.test(uploadId)) return next();
    const name = ctx.path.split('/')[1] ?? '';
    await rm(path.join(uploadsDir(name), uploadId), { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
  });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    config: (prefix = 'blobs') => ({
      kind: 's3',
      bucket,
      prefix,
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    }),
    pendingUploads: async () => {
      try {
        return await readdir(uploadsDir(bucket));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw err;
      }
    },
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
