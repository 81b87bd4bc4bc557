/**
 * Where blobs live: local disk under the data directory (the default), or an S3-compatible
 * bucket named by `BLOB_URL` / `blobs.url`:
 *   s3://bucket/optional/prefix?endpoint=http://minio:9000&region=us-east-1&force_path_style=true
 * Credentials come from `blobs.access_key_id` / `blobs.secret_access_key`, else the standard
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the SDK's default chain.
 */
import path from 'node:path';
import type { BlobConfig, ConfigFile } from './schema.js';

type Env = Readonly<Record<string, string | undefined>>;

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const KNOWN_PARAMS = new Set(['endpoint', 'region', 'force_path_style']);

export function resolveBlobConfig(file: ConfigFile, env: Env, dataDir: string, problems: string[]): BlobConfig {
  const local: BlobConfig = { kind: 'local', root: path.join(dataDir, 'blobs') };
  const fromEnv = Boolean(env.BLOB_URL);
  const raw = env.BLOB_URL || file.blobs?.url;
  if (!raw) return local;
  const name = fromEnv ? 'BLOB_URL' : 'blobs.url';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push(`${name}: not a valid URL (expected s3://bucket/prefix?endpoint=…)`);
    return local;
  }
  if (url.protocol !== 's3:') {
    problems.push(`${name}: must start with s3:// (local disk is the default when unset)`);
    return local;
  }
  const bucket = url.hostname;
  if (!BUCKET.test(bucket)) problems.push(`${name}: "${bucket}" is not a valid bucket name (3–63 lower-case letters, digits, dots, hyphens)`);
  for (const key of url.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(key)) problems.push(`${name}: unknown parameter "${key}" (known: ${[...KNOWN_PARAMS].join(', ')})`);
  }
  const endpoint = url.searchParams.get('endpoint');
  if (endpoint !== null && !/^https?:\/\/[^/]+/.test(endpoint)) problems.push(`${name}: endpoint must be an http:// or https:// URL`);
  const pathStyle = url.searchParams.get('force_path_style');
  if (pathStyle !== null && pathStyle !== 'true' && pathStyle !== 'false') problems.push(`${name}: force_path_style must be true or false`);
  return {
    kind: 's3',
    bucket,
    prefix: decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, ''),
    endpoint: endpoint ? endpoint.replace(/\/+$/, '') : null,
    region: url.searchParams.get('region') || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    // Path-style is what MinIO, Ceph and most self-hosted stores need; AWS and R2 take either.
    forcePathStyle: pathStyle === null ? endpoint !== null : pathStyle === 'true',
    credentials: resolveCredentials(file, env, problems),
  };
}

function resolveCredentials(file: ConfigFile, env: Env, problems: string[]): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null {
  const fromFile = file.blobs?.access_key_id !== undefined || file.blobs?.secret_access_key !== undefined;
  const accessKeyId = fromFile ? file.blobs?.access_key_id : env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = fromFile ? file.blobs?.secret_access_key : env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId && !secretAccessKey) return null;
  if (!accessKeyId || !secretAccessKey) {
    problems.push(
      fromFile
        ? 'blobs: access_key_id and secret_access_key must be given together'
        : 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together',
    );
    return null;
  }
  const sessionToken = fromFile ? undefined : env.AWS_SESSION_TOKEN || undefined;
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** For the start-up summary: where, never who. */
export function describeBlobConfig(blobs: BlobConfig): string {
  if (blobs.kind === 'local') return blobs.root;
  return `s3://${blobs.bucket}/${blobs.prefix}${blobs.endpoint ? ` at ${blobs.endpoint}` : ''}`;
}
