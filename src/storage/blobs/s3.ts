/**
 * Blob storage on any S3-compatible service (AWS S3, MinIO, Cloudflare R2, Ceph RGW) through
 * the official AWS SDK v3. Uploads stream through @aws-sdk/lib-storage in parts, so at most
 * `queueSize × partSize` bytes of an upload are in memory whatever its size; an object becomes
 * visible only when its upload completes, so a reader never sees a partial blob; a read whose
 * connection drops mid-body resumes from the byte it reached. A write that
 * exceeds `maxBytes` (or whose source fails) stops reading at once and aborts the multipart
 * upload, so no parts are left behind to be billed.
 */
import { Readable, pipeline } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3BlobConfig } from '../../config/schema.js';
import { BlobNotFoundError, type BlobStore, type PutOptions, type StoredBlob } from '../../domain/files/blob-store.port.js';
import { measuredStream } from './measured-stream.js';
import { resumableRead, type FetchPart, type ResumePolicy } from './resumable-read.js';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
/** S3's smallest part; 2 in flight keeps an upload's memory near 10 MB. */
const PART_BYTES = 5 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;
/** The SDK's own retries (exponential backoff with jitter) cover throttling, 5xx and dropped connections. */
const MAX_ATTEMPTS = 4;
/** They do not cover a body cut after the answer began: reads resume from the byte reached (resumable-read.ts). */
const READ_RESUMES: ResumePolicy = { maxResumes: 4, baseDelayMs: 200 };

export class S3BlobStore implements BlobStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(config: S3BlobConfig, client?: S3Client) {
    this.#bucket = config.bucket;
    this.#prefix = config.prefix ? `${config.prefix.replace(/\/+$/, '')}/` : '';
    this.#client =
      client ??
      new S3Client({
        region: config.region,
        endpoint: config.endpoint ?? undefined,
        forcePathStyle: config.forcePathStyle,
        // A copy: the config is frozen, and the SDK tags the credentials object it is given.
        credentials: config.credentials ? { ...config.credentials } : undefined,
        maxAttempts: MAX_ATTEMPTS,
        // Third-party stores (R2, Ceph, older MinIO) reject the SDK's default CRC32 trailers.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
  }

  #objectKey(key: string): string {
    if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.' || part === '')) {
      throw new Error(`invalid blob key: ${key}`);
    }
    return this.#prefix + key;
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array | string>, options: PutOptions = {}): Promise<StoredBlob> {
    const objectKey = this.#objectKey(key);
    const meter = measuredStream(options.maxBytes);
    const source = body instanceof Readable ? body : Readable.from(body);
    // pipeline destroys the source when the meter fails, so an oversized upload stops being read.
    pipeline(source, meter.stream, () => {});
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: objectKey, Body: meter.stream },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    await upload.done();
    return { key, ...meter.measured() };
  }

  async get(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const objectKey = this.#objectKey(key);
    const fetchPart: FetchPart = async (start, end, etag) => {
      const answer = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          // No Range on a whole read's first request: a plain GET works on every store, empty objects included.
          Range: range || start > 0 ? `bytes=${start}-${end ?? ''}` : undefined,
          IfMatch: etag,
        }),
      );
      return { body: answer.Body as Readable, length: answer.ContentLength, etag: answer.ETag };
    };
    try {
      return await resumableRead(fetchPart, range ?? { start: 0 }, READ_RESUMES);
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(key);
      // A range starting at or past the end: the same empty stream the local store gives.
      if (err instanceof S3ServiceException && err.name === 'InvalidRange') return Readable.from([]);
      throw err;
    }
  }

  async stat(key: string): Promise<{ bytes: number } | null> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }));
      return { bytes: head.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a missing key too.
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }));
  }

  /** Readiness: the bucket exists and these credentials may use it. */
  async check(): Promise<void> {
    await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
  }

  close(): void {
    this.#client.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  // Not any 404: a missing bucket (NoSuchBucket) is a storage error, not a missing blob.
  return err.name === 'NoSuchKey' || err.name === 'NotFound';
}
