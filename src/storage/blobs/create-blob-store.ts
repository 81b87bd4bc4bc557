/** The configured blob store: local disk by default, an S3-compatible bucket when `BLOB_URL` / `blobs.url` names one. */
import type { BlobConfig } from '../../config/schema.js';
import type { BlobStore } from '../../domain/files/blob-store.port.js';
import { LocalDiskBlobStore } from './local-disk.js';
import { S3BlobStore } from './s3.js';

export function createBlobStore(config: BlobConfig): BlobStore {
  return config.kind === 's3' ? new S3BlobStore(config) : new LocalDiskBlobStore(config.root);
}
